//! The RAN node driven on its own, without the simulator: hand-made
//! packets at hand-picked times, as any front end would drive it.

use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use tcran_core::{Duration, FiveTuple, Instant, Packet, PacketId, Protocol, Rnti};
use tcran_gnb::{ue_address, Gnb, GnbConfig, Output, Place};

fn node(toml_text: &str) -> Gnb {
    let cfg: GnbConfig = toml::from_str(toml_text).expect("config parses");
    cfg.build(Path::new(".")).expect("config builds")
}

fn ping_to(rnti: u16, id: u64, len: u32, at: Instant) -> Packet {
    let tuple = FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
        dst: ue_address(Rnti(rnti)),
        sport: 0,
        dport: 0,
        proto: Protocol::ICMP,
    };
    Packet::new(PacketId(id), len, tuple, at)
}

/// Runs the node exactly at each wake-up until `until`, feeding `inputs`
/// (sorted by time) at their times; returns every output.
fn drive_exact(gnb: &mut Gnb, inputs: &[(Instant, Packet)], until: Instant) -> Vec<Output> {
    let mut outputs = Vec::new();
    let mut next_input = 0;
    loop {
        let t_in = inputs.get(next_input).map(|(t, _)| *t);
        let t_node = gnb.next_wakeup();
        match (t_in, t_node) {
            (Some(ti), Some(tn)) if ti <= tn && ti <= until => {
                gnb.downlink(inputs[next_input].1.clone(), ti);
                next_input += 1;
            }
            (_, Some(tn)) if tn <= until => gnb.on_timeout(tn),
            _ => break,
        }
        outputs.extend(std::iter::from_fn(|| gnb.poll_output()));
    }
    outputs
}

fn delivered(outputs: &[Output]) -> Vec<(u64, Instant)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Delivered { packet, at, .. } => Some((packet.id.0, *at)),
            _ => None,
        })
        .collect()
}

const FDD_15KHZ: &str = r#"
    [cell]
    bandwidth_mhz = 10
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 20 }
"#;

/// TS 38.211 §4.3.2: slots of 1 ms at 15 kHz (numerology 0), 0.5 ms at 30
/// kHz. A packet that reaches an idle bearer between two slot boundaries
/// goes into the next slot's transport block and reaches the UE at the end
/// of that slot; one that arrives at a boundary makes that slot.
#[test]
fn no_load_packet_arrives_at_the_end_of_the_next_slot() {
    for (cfg, slot_us) in [
        (FDD_15KHZ.to_string(), 1000u64),
        (FDD_15KHZ.replace("[cell]", "[cell]\nnumerology = 1"), 500),
    ] {
        for arrival_us in [0, 1, 300, slot_us - 1, slot_us, 7 * slot_us + 123] {
            let mut gnb = node(&cfg);
            let at = Instant::ZERO + Duration::from_micros(arrival_us);
            let out = drive_exact(
                &mut gnb,
                &[(at, ping_to(1, 7, 84, at))],
                Instant::ZERO + Duration::from_millis(20),
            );
            let first_slot = arrival_us.div_ceil(slot_us);
            let expected = Instant::ZERO + Duration::from_micros((first_slot + 1) * slot_us);
            assert_eq!(
                delivered(&out),
                vec![(7, expected)],
                "{slot_us}-us slots, arrival at {arrival_us} us"
            );
        }
    }
}

/// In a TDD cell a packet waits for a slot with downlink symbols: with
/// "DDDSU" (TS 38.213 §11.1 slot formats; 30 kHz) a packet arriving during
/// the U slot (slot 4 of the pattern) is sent in slot 5, the next D slot.
#[test]
fn tdd_packet_waits_for_the_next_downlink_slot() {
    let cfg = r#"
        [cell]
        bandwidth_mhz = 20
        numerology = 1
        slot_pattern = "DDDSU"
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 20 }
    "#;
    let mut gnb = node(cfg);
    // Slot 4 (U) spans 2.0-2.5 ms; the packet arrives at 2.1 ms.
    let at = Instant::ZERO + Duration::from_micros(2100);
    let out = drive_exact(
        &mut gnb,
        &[(at, ping_to(1, 1, 84, at))],
        Instant::ZERO + Duration::from_millis(10),
    );
    // Sent in slot 5 (2.5-3.0 ms), at the UE at its end.
    assert_eq!(
        delivered(&out),
        vec![(1, Instant::ZERO + Duration::from_micros(3000))]
    );
}

/// The uplink without the scheduling-request model: a packet reaches the
/// UPF `ul_delay` after the UE sent it.
#[test]
fn uplink_packet_reaches_the_core_after_the_uplink_delay() {
    let mut gnb = node(&FDD_15KHZ.replace("[cell]", "ul_delay = \"3ms\"\n[cell]"));
    let sent = Instant::ZERO + Duration::from_micros(4200);
    let mut reply = ping_to(1, 9, 84, sent);
    std::mem::swap(&mut reply.tuple.src, &mut reply.tuple.dst);
    gnb.uplink(Rnti(1), reply, sent);
    let ups: Vec<_> = std::iter::from_fn(|| gnb.poll_output())
        .filter_map(|o| match o {
            Output::Uplink { packet, at, rnti } => Some((rnti, packet.id.0, at)),
            _ => None,
        })
        .collect();
    assert_eq!(ups, vec![(Rnti(1), 9, sent + Duration::from_millis(3))]);
}

/// A packet for an address that is no UE of the cell is dropped at SDAP
/// with reason `no_route`, and reported.
#[test]
fn packet_for_an_unknown_ue_is_dropped_with_a_reason() {
    let mut gnb = node(FDD_15KHZ);
    gnb.downlink(ping_to(2, 1, 84, Instant::ZERO), Instant::ZERO);
    let out: Vec<_> = std::iter::from_fn(|| gnb.poll_output()).collect();
    assert!(out.iter().any(|o| matches!(
        o,
        Output::Dropped { layer: tcran_gnb::Layer::Sdap, reason, .. } if reason.label() == "no_route"
    )));
    assert_eq!(
        gnb.drop_counts().get(&(tcran_gnb::Layer::Sdap, "no_route")),
        Some(&1)
    );
}

/// An SDU the full RLC buffer refuses (tail drop, `rlc_full`) reached
/// the RLC all the same: it carries the `rlc_in` stamp of its arrival,
/// as the SDUs the buffer takes do, so its layer delays add up.
#[test]
fn an_sdu_the_full_rlc_buffer_refuses_is_stamped_rlc_in() {
    let mut gnb = node(
        r#"
        [cell]
        bandwidth_mhz = 10
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 20 }
        [[ues.drbs]]
        id = 1
        rlc = { mode = "am", buffer_limit = "1500B" }
    "#,
    );
    let at = Instant::ZERO + Duration::from_micros(100);
    gnb.downlink(ping_to(1, 1, 1000, at), at);
    gnb.downlink(ping_to(1, 2, 1000, at), at);
    let out: Vec<_> = std::iter::from_fn(|| gnb.poll_output()).collect();
    let refused: Vec<_> = out
        .iter()
        .filter_map(|o| match o {
            Output::Dropped { packet, reason, .. } if reason.label() == "rlc_full" => {
                Some((packet.id.0, packet.stamps.rlc_in.get()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(refused, vec![(2, Some(at))]);
    let until = Instant::ZERO + Duration::from_millis(20);
    let later = drive_exact(&mut gnb, &[], until);
    let taken: Vec<_> = later
        .iter()
        .filter_map(|o| match o {
            Output::Delivered { packet, .. } => Some((packet.id.0, packet.stamps.rlc_in.get())),
            _ => None,
        })
        .collect();
    assert_eq!(taken, vec![(1, Some(at))]);
}

/// Two DRBs of one UE with the same id (a second `[[ues.drbs]]` without
/// `id` is DRB 1 again) are refused, naming the field: they would share
/// one DRB's accounting (found by the scenario fuzz target: in-flight
/// packets counted twice).
#[test]
fn a_drb_id_twice_in_one_ue_is_refused() {
    let text = r#"
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 28 }
        [[ues.drbs]]
        [[ues.drbs]]
        id = 1
        rlc = { mode = "um", buffer_limit = "5MB" }
    "#;
    let cfg: GnbConfig = toml::from_str(text).expect("config parses");
    let e = cfg.build(std::path::Path::new(".")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ues[0].drbs[1].id = 1: must be unique within the UE (a DRB without `id` has id 1)"
    );
    // Distinct ids are fine.
    let ok = text.replace(
        "[[ues.drbs]]\n        [[ues.drbs]]",
        "[[ues.drbs]]\n        id = 2\n        [[ues.drbs]]",
    );
    node(&ok);
}

const LOADED: &str = r#"
    [cell]
    bandwidth_mhz = 5
    bler = 0.1
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 9 }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "am", buffer_limit = "60kB" }
    [[ues]]
    rnti = 2
    channel = { kind = "mcs", mcs = 16 }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "um", buffer_limit = "40kB" }
"#;

/// Random bursts of packets for two UEs (one of them unknown now and
/// then), sorted by time.
fn bursts() -> impl Strategy<Value = Vec<(Instant, Packet)>> {
    proptest::collection::vec((0u64..200_000, 0u16..3, 40u32..1500), 1..400).prop_map(|v| {
        let mut v: Vec<_> = v
            .into_iter()
            .enumerate()
            .map(|(i, (us, ue, len))| {
                let at = Instant::ZERO + Duration::from_micros(us);
                (at, ping_to(ue + 1, i as u64 + 1, len, at))
            })
            .collect();
        v.sort_by_key(|(t, p)| (*t, p.id));
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A late wall clock changes nothing but the lateness counters: a
    /// driver that wakes the node only every few milliseconds (missing
    /// many slots) gets the same outputs, with the same times, as one
    /// that wakes it exactly on time.
    #[test]
    fn late_wakeups_run_the_missed_slots_with_their_own_times(
        inputs in bursts(),
        gap_us in 300u64..7000,
    ) {
        // A driver waking on the slot grid (every 0.5 or 1 ms: the cell's
        // slots are 1 ms) is never late: it has nothing to show here.
        prop_assume!(1000 % gap_us != 0);
        let until = Instant::ZERO + Duration::from_millis(300);
        let mut exact = node(LOADED);
        let expected = drive_exact(&mut exact, &inputs, until);

        let mut late = node(LOADED);
        let mut got = Vec::new();
        let mut t = Instant::ZERO;
        let mut next_input = 0;
        while t <= until {
            while let Some((ti, p)) = inputs.get(next_input).filter(|(ti, _)| *ti <= t) {
                late.downlink(p.clone(), *ti);
                next_input += 1;
            }
            late.on_timeout(t);
            got.extend(std::iter::from_fn(|| late.poll_output()));
            t += Duration::from_micros(gap_us);
        }
        late.on_timeout(until);
        got.extend(std::iter::from_fn(|| late.poll_output()));
        let key = |o: &Output| format!("{o:?}");
        prop_assert_eq!(
            expected.iter().map(key).collect::<Vec<_>>(),
            got.iter().map(key).collect::<Vec<_>>()
        );
        prop_assert_eq!(exact.timing().late_events, 0);
        prop_assert!(late.timing().late_events > 0);
    }

    /// Nothing is lost without a reason: every packet handed in is
    /// delivered, dropped, or found in flight, exactly once.
    #[test]
    fn every_packet_is_delivered_dropped_or_in_flight(inputs in bursts(), stop_ms in 1u64..250) {
        let mut gnb = node(LOADED);
        let until = Instant::ZERO + Duration::from_millis(stop_ms);
        let given: Vec<_> = inputs.iter().filter(|(t, _)| *t <= until).cloned().collect();
        let out = drive_exact(&mut gnb, &given, until);
        let mut seen = std::collections::BTreeMap::new();
        for o in &out {
            match o {
                Output::Delivered { packet, .. } | Output::Dropped { packet, .. } => {
                    *seen.entry(packet.id).or_insert(0) += 1;
                }
                Output::DropWithdrawn { id, .. } => *seen.entry(*id).or_insert(0) -= 1,
                _ => {}
            }
        }
        let mut places = std::collections::BTreeMap::<Place, u64>::new();
        gnb.for_each_in_flight(|place, p| {
            *seen.entry(p.id).or_insert(0) += 1;
            *places.entry(place).or_default() += 1;
        });
        for (_, p) in &given {
            prop_assert_eq!(seen.get(&p.id).copied(), Some(1), "packet {:?}", p.id);
        }
        prop_assert_eq!(seen.len(), given.len());
    }
}

/// The TS 28.552 measurements over an interval. A 5 MHz cell at 15 kHz
/// has 25 PRBs (TS 38.101-1 Table 5.3.2-1); a saturated bearer uses all of
/// them, and its UE throughput (volume over the time the buffer held data,
/// without the slot that emptied it) is what the slots carried; a burst
/// that fits in one slot gives no throughput sample at all ("no value").
#[test]
fn ts28552_measurements_over_an_interval() {
    let cfg = r#"
        [cell]
        bandwidth_mhz = 5
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 20 }
        [[ues.drbs]]
        id = 1
        rlc = { mode = "um", buffer_limit = "10MB" }
    "#;
    // Saturated: 2000 packets of 1500 B at t = 0, then 100 slots.
    let mut gnb = node(cfg);
    let burst: Vec<_> = (0..2000)
        .map(|i| (Instant::ZERO, ping_to(1, i + 1, 1500, Instant::ZERO)))
        .collect();
    let until = Instant::ZERO + Duration::from_millis(100);
    let before_cell = *gnb.cell_counters();
    let before_drb = *gnb.drb(Rnti(1), tcran_core::DrbId(1)).unwrap().counters();
    drive_exact(&mut gnb, &burst, until);
    let cell = gnb.cell_counters().kpis(&before_cell);
    assert_eq!(cell.prb_avail_dl, Some(25.0));
    assert_eq!(cell.prb_used_dl, Some(25.0));
    assert_eq!(cell.prb_tot_dl_percent, Some(100.0));
    let drb = gnb.drb(Rnti(1), tcran_core::DrbId(1)).unwrap();
    let k = drb.counters().kpis(&before_drb);
    // Every slot carried one transport block of the full cell's TBS.
    let mcs = tcran_ran::phy::mcs::Mcs::new(tcran_ran::phy::mcs::McsTable::Qam64, 20).unwrap();
    let tbs = tcran_ran::phy::tbs::bytes_per_slot(mcs, 25, 1).unwrap();
    let thp = k
        .ue_thp_dl_kbps
        .expect("a saturated bearer has a throughput");
    // bytes per 1-ms slot * 8 = kbit/s; RLC/MAC headers and padding take a
    // few bytes of each block.
    let full = f64::from(tbs) * 8.0;
    assert!(thp <= full && thp > 0.97 * full, "{thp} kbit/s vs {full}");
    assert!(k.rlc_sdu_delay_dl.is_some());
    assert!(k.pdcp_sdu_volume_dl_mbit > 0.0);

    // One small packet on an idle bearer: sent in one slot, which empties
    // the buffer, so no throughput sample; its RLC delay is known.
    let mut gnb = node(cfg);
    let before = *gnb.drb(Rnti(1), tcran_core::DrbId(1)).unwrap().counters();
    let at = Instant::ZERO + Duration::from_micros(500);
    drive_exact(
        &mut gnb,
        &[(at, ping_to(1, 1, 84, at))],
        Instant::ZERO + Duration::from_millis(5),
    );
    let k = gnb
        .drb(Rnti(1), tcran_core::DrbId(1))
        .unwrap()
        .counters()
        .kpis(&before);
    assert_eq!(k.ue_thp_dl_kbps, None);
    // UM: the SDU leaves the buffer when sent, at the slot after arrival
    // (0.5 ms of waiting = 5 units of 0.1 ms).
    assert_eq!(k.rlc_sdu_delay_dl, Some(5.0));
    assert!((k.pdcp_sdu_volume_dl_mbit - 84.0 * 8.0 / 1e6).abs() < 1e-12);
}

/// The report every pacer gets on a DDDSU cell (30 kHz, MCS 20): one per
/// slot with downlink and none in the U slot (TS 38.213 §11.1: a U slot
/// has no PDSCH, so no MAC pull); `next_pull_in` is one slot, two after the
/// S slot; `pulls_per_pattern` is 4; and what it says about the cell (TTI,
/// next pull, pattern, capacity at every PRB) is the same whichever pacer
/// the bearer runs, with the same pings queued.
#[test]
fn every_pacer_gets_the_same_report_and_none_for_uplink_slots() {
    let slot = Duration::from_micros(500);
    let mut streams = Vec::new();
    for pacer in [
        "none", "jit", "e5g_bdp", "bdp", "drql", "dynrlc", "dql", "usp",
    ] {
        let cfg = format!(
            r#"
            [cell]
            bandwidth_mhz = 20
            numerology = 1
            slot_pattern = "DDDSU"
            [[ues]]
            rnti = 1
            channel = {{ kind = "mcs", mcs = 20 }}
            [[ues.drbs]]
            id = 1
            pipeline = {{ pacer = {{ kind = "{pacer}" }}, queues = [ {{ id = 0, kind = "fifo" }} ] }}
            "#
        );
        let mut gnb = node(&cfg);
        let inputs: Vec<(Instant, Packet)> = (0..200u64)
            .map(|k| {
                let at = Instant::ZERO + Duration::from_micros(97 * k);
                (at, ping_to(1, k, 1400, at))
            })
            .collect();
        let until = Instant::ZERO + Duration::from_millis(40);
        let mut seen = Vec::new();
        for (at, r) in reports(&mut gnb, &inputs, until) {
            let idx = at.as_nanos() / slot.as_nanos();
            assert_ne!(idx % 5, 4, "{pacer}: a report in the U slot {idx}");
            let gap = if idx % 5 == 3 { 2 } else { 1 };
            assert_eq!(
                r.next_pull_in,
                Duration::from_nanos(slot.as_nanos() * gap),
                "{pacer}: slot {idx}"
            );
            assert_eq!(r.pulls_per_pattern, 4, "{pacer}");
            assert_eq!(r.tti, slot, "{pacer}");
            seen.push((at, r.tti, r.next_pull_in, r.pulls_per_pattern, r.max_bytes));
        }
        // Slots 0..=80 (the one starting at 40 ms included), U slots out.
        let dl = (0..=80u64).filter(|i| i % 5 != 4).count();
        assert_eq!(seen.len(), dl, "{pacer}: reports in 40 ms");
        streams.push((pacer, seen));
    }
    for (pacer, s) in &streams[1..] {
        assert_eq!(
            s, &streams[0].1,
            "{pacer} was told something else about the cell"
        );
    }
}

/// Every report of one bearer's DRB 1 until `until`, one per pull.
fn reports(
    gnb: &mut Gnb,
    inputs: &[(Instant, Packet)],
    until: Instant,
) -> Vec<(Instant, tcran_tc::LowerLayerReport)> {
    let mut seen = Vec::new();
    let mut next_input = 0;
    loop {
        let t_in = inputs.get(next_input).map(|(t, _)| *t);
        let Some(tn) = gnb.next_wakeup() else { break };
        if t_in.is_some_and(|ti| ti <= tn) {
            gnb.downlink(inputs[next_input].1.clone(), t_in.unwrap());
            next_input += 1;
        } else if tn <= until {
            gnb.on_timeout(tn);
        } else {
            break;
        }
        while gnb.poll_output().is_some() {}
        let rec = *gnb.drb(Rnti(1), tcran_core::DrbId(1)).unwrap().last_tti();
        if !rec.report.tti.is_zero() && seen.last().is_none_or(|(at, _)| *at != rec.at) {
            seen.push((rec.at, rec.report));
        }
    }
    seen
}

/// The report's head-of-line age is how long the oldest SDU with bytes
/// left has waited in RLC, counted after the pull, and the MAC's view of
/// the UE is the grant's: MCS 0 on all 52 PRBs of a 10-MHz cell at 15 kHz
/// (TS 38.101-1 Table 5.3.2-1) carries a few hundred bytes a slot, so a
/// 1500-byte SDU that reaches RLC at 0.5 ms heads the line for several
/// 1-ms slots, one decoded transport block each.
#[test]
fn the_report_carries_the_head_of_line_age_and_the_macs_view() {
    let mut gnb = node(&FDD_15KHZ.replace("mcs = 20", "mcs = 0"));
    let at = Instant::ZERO + Duration::from_micros(500);
    let seen = reports(
        &mut gnb,
        &[(at, ping_to(1, 1, 1500, at))],
        Instant::ZERO + Duration::from_millis(20),
    );
    let busy: Vec<_> = seen.iter().filter(|(_, r)| r.pulled_bytes > 0).collect();
    assert!(
        busy.len() >= 4,
        "a 1500-byte SDU takes several slots at MCS 0"
    );
    for (t, r) in &seen {
        assert_eq!(r.mcs, Some(0));
        assert_eq!(r.harq_nacks, 0, "no block errors by default");
        if r.pulled_bytes > 0 {
            // Every PRB while the SDU fills them, fewer for its tail.
            let full = r.backlog_bytes > 0;
            assert!(
                r.prbs == 52 || !full && r.prbs > 0,
                "{} PRBs at {t:?}",
                r.prbs
            );
            assert_eq!(r.harq_acks, 1, "at {t:?}");
        } else {
            assert_eq!((r.prbs, r.harq_acks), (0, 0), "at {t:?}");
        }
        let waiting = r.backlog_bytes > 0;
        let expected = if waiting {
            t.saturating_since(at)
        } else {
            Duration::ZERO
        };
        assert_eq!(r.head_of_line_age, expected, "at {t:?}");
    }
    // A capacity trace has no MCS.
    let mut gnb = node(&FDD_15KHZ.replace(
        r#"channel = { kind = "mcs", mcs = 20 }"#,
        r#"channel = { kind = "trace", path = "builtin:verizon-lte-short" }"#,
    ));
    let seen = reports(
        &mut gnb,
        &[(at, ping_to(1, 1, 1500, at))],
        at + Duration::from_millis(5),
    );
    assert!(!seen.is_empty() && seen.iter().all(|(_, r)| r.mcs.is_none()));
}

/// The node's HARQ counters (what FlexRIC's MAC model reports) count the
/// same transmissions as the per-slot reports: every transmission is one
/// of `tx`, every NACK a retransmission, a TB given up or one still
/// waiting for its retransmission at the end; at a block error rate of
/// 25 % about a quarter of them failed.
#[test]
fn the_nodes_harq_counters_count_the_reports_transmissions() {
    use tcran_control::{DrbKey, RanNode};
    let cfg = FDD_15KHZ.replace(
        "bandwidth_mhz = 10",
        "bandwidth_mhz = 10\n    bler = 0.25\n    max_harq_tx = 2",
    );
    let mut gnb = node(&cfg);
    let inputs: Vec<(Instant, Packet)> = (0..2000u64)
        .map(|k| {
            let at = Instant::ZERO + Duration::from_micros(250 * k);
            (at, ping_to(1, k, 1400, at))
        })
        .collect();
    let until = Instant::ZERO + Duration::from_millis(500);
    let seen = reports(&mut gnb, &inputs, until);
    let (acks, nacks) = seen.iter().fold((0u64, 0u64), |(a, n), (_, r)| {
        (a + u64::from(r.harq_acks), n + u64::from(r.harq_nacks))
    });
    let key = DrbKey::new(1, 1);
    let h = gnb.bearer(key, until).unwrap().harq;
    let sent: u64 = h.tx.iter().sum();
    assert_eq!(sent, acks + nacks, "{h:?}");
    let failed = sent - h.tx[0] + h.lost;
    // One TB per slot at most waits for its retransmission (8 slots later).
    assert!(
        failed <= nacks && nacks - failed <= 8,
        "{h:?}, {nacks} NACKs"
    );
    // With max_harq_tx = 2 a TB is sent at most twice: a second failure
    // gives it up.
    assert_eq!((h.tx[2], h.tx[3]), (0, 0), "{h:?}");
    assert!(h.lost > 0 && h.retx_prbs >= h.tx[1] && h.retx_prbs <= 52 * h.tx[1]);
    let share = nacks as f64 / sent as f64;
    assert!((share - 0.25).abs() < 4.0 * (0.25 * 0.75 / sent as f64).sqrt());
}

/// HARQ outcomes in the report add up to every transport block sent: at a
/// block error rate of 25 % about a quarter of the transmissions are
/// NACKed (within 4 standard deviations of the binomial), and a slot
/// reports PRBs exactly when it sent a block.
#[test]
fn harq_outcomes_in_the_report_follow_the_block_error_rate() {
    let cfg = FDD_15KHZ.replace(
        "bandwidth_mhz = 10",
        "bandwidth_mhz = 10\n    bler = 0.25\n    max_harq_tx = 4",
    );
    let mut gnb = node(&cfg);
    let inputs: Vec<(Instant, Packet)> = (0..2000u64)
        .map(|k| {
            let at = Instant::ZERO + Duration::from_micros(250 * k);
            (at, ping_to(1, k, 1400, at))
        })
        .collect();
    let seen = reports(
        &mut gnb,
        &inputs,
        Instant::ZERO + Duration::from_millis(500),
    );
    let (acks, nacks) = seen.iter().fold((0u64, 0u64), |(a, n), (_, r)| {
        (a + u64::from(r.harq_acks), n + u64::from(r.harq_nacks))
    });
    let n = (acks + nacks) as f64;
    let share = nacks as f64 / n;
    let sigma = (0.25 * 0.75 / n).sqrt();
    assert!(n > 400.0, "{n} transport blocks");
    assert!(
        (share - 0.25).abs() < 4.0 * sigma,
        "NACK share {share:.3} of {n}"
    );
    assert!(seen.iter().all(|(_, r)| r.prbs <= 52 && r.mcs == Some(20)));
    assert!(
        seen.iter()
            .all(|(_, r)| (r.prbs > 0) == (r.harq_acks + r.harq_nacks > 0)),
        "PRBs were given exactly when a transport block was sent"
    );
}

/// Packets of `flows` UDP flows to UE 1 (each its own source port), at
/// random instants over the first two seconds, in bursts and pauses, so
/// the RLC buffer fills and drains to empty again and again.
fn flows_with_pauses() -> impl Strategy<Value = Vec<(Instant, Packet)>> {
    proptest::collection::vec((0u64..2_000_000, 0u16..8, 40u32..1500, 1u32..40), 1..60).prop_map(
        |bursts| {
            let mut v = Vec::new();
            for (start_us, flow, len, count) in bursts {
                for k in 0..count {
                    let at = Instant::ZERO + Duration::from_micros(start_us + 150 * k as u64);
                    let mut p = ping_to(1, v.len() as u64 + 1, len, at);
                    p.tuple.proto = Protocol::UDP;
                    p.tuple.sport = 5000 + flow;
                    v.push((at, p));
                }
            }
            v.sort_by_key(|(t, p)| (*t, p.id));
            v
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Liveness under a wall clock: whatever the pacer, a bearer whose
    /// traffic stops empties. Driven as the emulator drives the node (it
    /// wakes late by up to 20 ms, hands each packet in at the instant it
    /// read it, not at its arrival), the FQ-CoDel pipeline of the
    /// emulator's cross-validation delivers or drops every packet within
    /// a second of the last one; none stays queued behind a pacer that
    /// waits for a report that never comes.
    #[test]
    fn every_pacer_drains_a_bearer_under_late_wakeups(
        inputs in flows_with_pauses(),
        gaps_us in proptest::collection::vec(100u64..20_000, 64),
    ) {
        for pacer in ["none", "jit", "e5g_bdp", "bdp", "drql", "dynrlc", "dql", "usp"] {
            let cfg = format!(
                r#"
                [cell]
                bandwidth_mhz = 5
                [[ues]]
                rnti = 1
                channel = {{ kind = "mcs", mcs = 28 }}
                [[ues.drbs]]
                id = 1
                pipeline = {{ classifier = {{ kind = "flow_hash", buckets = 64 }}, scheduler = {{ kind = "drr" }}, pacer = {{ kind = "{pacer}" }}, queues = [ {{ id = 0, count = 64, kind = "codel" }} ] }}
                "#
            );
            let mut gnb = node(&cfg);
            let last = inputs.last().map_or(Instant::ZERO, |(t, _)| *t);
            let until = last + Duration::from_secs(1);
            let mut t = Instant::ZERO;
            let mut next_input = 0;
            let mut wake = 0;
            while t <= until {
                while let Some((_, p)) = inputs.get(next_input).filter(|(ti, _)| *ti <= t) {
                    gnb.downlink(p.clone(), t);
                    next_input += 1;
                }
                gnb.on_timeout(t);
                while gnb.poll_output().is_some() {}
                t += Duration::from_micros(gaps_us[wake % gaps_us.len()]);
                wake += 1;
            }
            let mut stuck = std::collections::BTreeMap::<Place, u64>::new();
            gnb.for_each_in_flight(|place, _| *stuck.entry(place).or_default() += 1);
            prop_assert!(
                stuck.is_empty(),
                "{}: {:?} still in flight 1 s after the last of {} packets",
                pacer,
                stuck,
                inputs.len()
            );
        }
    }
}
