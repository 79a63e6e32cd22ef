//! CoDel inside the RLC transmit buffer: RFC 8289 drop schedule on SDU
//! sojourn, nothing lost, partly sent SDUs never dropped, ECN marking, and
//! an AM receiver that sees no hole where an SDU was dropped.

use proptest::prelude::*;
use tcran_core::{
    DrbId, DropReason, Duration, Ecn, FiveTuple, Instant, MarkReason, Packet, PacketId,
};
use tcran_ran::rlc::{CodelConfig, InvSqrt, RlcAqmConfig, RlcConfig, RlcMode, RlcRx, RlcTx};

fn pkt(id: u64, len: u32, ecn: Ecn) -> Packet {
    let mut p = Packet::new(PacketId(id), len, FiveTuple::default(), Instant::ZERO);
    p.ecn = ecn;
    p
}

fn ms(t: u64) -> Instant {
    Instant::from_millis(t)
}

/// The thesis ch. 3 setting: target 15 ms, interval 300 ms.
fn thesis_codel(inv_sqrt: InvSqrt, ecn: bool) -> CodelConfig {
    CodelConfig {
        target: Duration::from_millis(15),
        interval: Duration::from_millis(300),
        inv_sqrt,
        ecn,
        ..CodelConfig::default()
    }
}

fn tx_with(mode: RlcMode, codel: CodelConfig) -> RlcTx {
    let cfg = RlcConfig {
        mode,
        aqm: Some(RlcAqmConfig::Codel(codel)),
        ..RlcConfig::default()
    };
    RlcTx::new(cfg.build().unwrap(), DrbId(1))
}

/// 300 SDUs of 1000 B at t = 0, one sent every 7 ms (UM, 12-bit SN: a
/// 1004-byte grant holds 1 B UMD header + 1000 B + 3 B MAC subheader).
/// Returns the drop times in ms.
fn drop_times(inv_sqrt: InvSqrt) -> Vec<u64> {
    let mut tx = tx_with(RlcMode::Um, thesis_codel(inv_sqrt, false));
    for id in 0..300 {
        tx.enqueue(pkt(id, 1000, Ecn::NotEct), ms(0)).unwrap();
    }
    let (mut pdus, mut dep, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
    let mut times = Vec::new();
    for k in 1..=190 {
        let t = 7 * k;
        pdus.clear();
        assert_eq!(tx.fill(1004, ms(t), &mut pdus, &mut dep), 1004);
        assert_eq!(pdus.len(), 1, "one whole SDU per grant");
        let before = dropped.len();
        tx.drain_dropped(&mut dropped);
        assert!(dropped.len() - before <= 1);
        if dropped.len() > before {
            times.push(t);
        }
    }
    assert!(dropped.iter().all(|(_, r)| *r == DropReason::Codel));
    times
}

/// Hand-worked RFC 8289 schedule. The head's sojourn equals the dequeue
/// time t (all SDUs arrived at 0); it first reaches the 15 ms target at the
/// 21 ms dequeue, so the first drop is at the first dequeue strictly after
/// 21 + 300 = 321 ms: 322 ms. Then count = 1 and drop_next = 322 + 300 =
/// 622 -> drop at 623; drop_next += 300/sqrt(2) = 834.13 -> 840;
/// += 300/sqrt(3) = 1007.34 -> 1008; += 300/2 = 1157.34 -> 1162;
/// += 300/sqrt(5) = 1291.50 -> 1295 (dequeues every 7 ms).
#[test]
fn codel_at_the_rlc_drops_on_the_rfc_8289_schedule() {
    assert_eq!(
        drop_times(InvSqrt::Exact),
        [322, 623, 840, 1008, 1162, 1295]
    );
}

/// Linux fixed point: at the second drop count becomes 2 and one Newton
/// step from 1.0 gives 1/sqrt(2) ~ 0x8001/2^16 ~ 0.5, so drop_next =
/// 622 + 150 = 772 -> third drop at 777 (exact: 840).
#[test]
fn newton_mode_gives_the_linux_gap_after_the_second_drop() {
    assert_eq!(drop_times(InvSqrt::Newton)[..3], [322, 623, 777]);
}

/// ECN-capable SDUs are CE-marked instead of dropped, and the mark is on
/// the SDU the RLC transmits.
#[test]
fn ect_sdus_are_marked_not_dropped() {
    let mut tx = tx_with(RlcMode::Um, thesis_codel(InvSqrt::Exact, true));
    for id in 0..300 {
        tx.enqueue(pkt(id, 1000, Ecn::Ect0), ms(0)).unwrap();
    }
    let (mut pdus, mut dep, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
    for k in 1..=100 {
        tx.fill(1004, ms(7 * k), &mut pdus, &mut dep);
        tx.drain_dropped(&mut dropped);
    }
    assert!(dropped.is_empty());
    let marked: Vec<u64> = pdus
        .iter()
        .filter(|p| p.packet.ecn == Ecn::Ce)
        .map(|p| p.packet.id.0)
        .collect();
    // The first signal (322 ms = 46th dequeue) hits the 46th SDU, id 45;
    // then 623 ms (89th, id 88).
    assert_eq!(marked, [45, 88]);
    assert_eq!(tx.aqm_marks().unwrap().get(MarkReason::Codel), 2);
}

/// An SDU whose first segment went out has left the AQM: big SDUs sent in
/// small grants under a long sojourn are dropped only whole, before any
/// byte of them is sent, and every SDU started is completed.
#[test]
fn partly_sent_sdus_are_never_dropped() {
    let mut tx = tx_with(RlcMode::Um, thesis_codel(InvSqrt::Exact, false));
    for id in 0..400 {
        tx.enqueue(pkt(id, 3000, Ecn::NotEct), ms(0)).unwrap();
    }
    let (mut pdus, mut dep, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
    for t in 1..=2000 {
        tx.fill(700, ms(t), &mut pdus, &mut dep);
        tx.drain_dropped(&mut dropped);
    }
    assert!(dropped.len() >= 5, "CoDel must act: {}", dropped.len());
    let sent_bytes = |id: u64| -> u32 {
        pdus.iter()
            .filter(|p| p.packet.id.0 == id)
            .map(|p| p.len)
            .sum()
    };
    for (p, _) in &dropped {
        assert_eq!(sent_bytes(p.id.0), 0, "SDU {} was partly sent", p.id.0);
    }
    let completed: Vec<u64> = dep.iter().map(|d| d.packet_id.0).collect();
    let started: Vec<u64> = (0..400).filter(|&id| sent_bytes(id) > 0).collect();
    // All started SDUs but possibly the last one in flight are complete.
    assert!(started.len() - completed.len() <= 1);
    for id in &completed {
        assert_eq!(sent_bytes(*id), 3000);
    }
}

/// AM: a dropped SDU never got an SN, so the receiver delivers every other
/// SDU without waiting for it, and no STATUS PDU NACKs anything.
#[test]
fn am_drops_leave_no_sequence_number_hole() {
    let cfg = RlcConfig {
        mode: RlcMode::Am,
        aqm: Some(RlcAqmConfig::Codel(thesis_codel(InvSqrt::Exact, false))),
        ..RlcConfig::default()
    };
    let p = cfg.build().unwrap();
    let mut tx = RlcTx::new(p.clone(), DrbId(1));
    let mut rx = RlcRx::new(p, DrbId(1));
    for id in 0..300 {
        tx.enqueue(pkt(id, 1000, Ecn::NotEct), ms(0)).unwrap();
    }
    let (mut pdus, mut dep, mut dropped, mut delivered) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in 1..=200 {
        let now = ms(7 * k);
        pdus.clear();
        // AM 18-bit SN: 3 B header + 1000 B + 3 B MAC subheader.
        tx.fill(1006, now, &mut pdus, &mut dep);
        tx.drain_dropped(&mut dropped);
        for pdu in pdus.drain(..) {
            rx.on_pdu(pdu, now, &mut delivered);
        }
        if let Some(s) = rx.poll_status(now) {
            assert!(s.nacks.is_empty(), "{s:?}");
            tx.on_status(&s, now, &mut dep);
        }
    }
    let dropped_ids: Vec<u64> = dropped.iter().map(|(p, _)| p.id.0).collect();
    assert_eq!(dropped_ids.len(), 6);
    let delivered_ids: Vec<u64> = delivered.iter().map(|p| p.id.0).collect();
    let expected: Vec<u64> = (0..206).filter(|id| !dropped_ids.contains(id)).collect();
    assert_eq!(delivered_ids, expected);
}

#[test]
fn aqm_config_reads_units_and_names_bad_fields() {
    let c: RlcConfig = toml::from_str(
        "mode = \"um\"\naqm = { kind = \"codel\", target = \"15ms\", interval = \"300ms\", ecn = true }",
    )
    .unwrap();
    let Some(RlcAqmConfig::Codel(codel)) = &c.aqm else {
        panic!("{c:?}")
    };
    assert_eq!(
        (codel.target, codel.interval, codel.ecn),
        (Duration::from_millis(15), Duration::from_millis(300), true)
    );
    assert!(c.build().is_ok());
    assert_eq!(RlcConfig::default().aqm, None);
    assert!(toml::from_str::<RlcConfig>("aqm = { kind = \"codel\", targt = \"15ms\" }").is_err());
    assert!(toml::from_str::<RlcConfig>("aqm = { kind = \"red\" }").is_err());
    let bad = RlcConfig {
        aqm: Some(RlcAqmConfig::Codel(CodelConfig {
            interval: Duration::ZERO,
            ..CodelConfig::default()
        })),
        ..RlcConfig::default()
    };
    assert_eq!(
        bad.build().unwrap_err().to_string(),
        "aqm.interval = 0ms: must be in 1us..=100s"
    );
}

#[derive(Debug, Clone)]
enum Op {
    Enqueue { len: u32, ect: bool },
    Fill { grant: u32, dt_ms: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1u32..4000, any::<bool>()).prop_map(|(len, ect)| Op::Enqueue { len, ect }),
        2 => (0u32..5000, 0u64..20).prop_map(|(grant, dt_ms)| Op::Fill { grant, dt_ms }),
    ]
}

proptest! {
    /// Every SDU the RLC accepted is, at every step, exactly one of:
    /// departed (UM: sent; no STATUS here, so none in AM), dropped by the
    /// AQM (with reason Codel, and never with a byte on the air) or held.
    #[test]
    fn nothing_is_lost(ops in proptest::collection::vec(op(), 1..400), am: bool, ecn: bool) {
        let mode = if am { RlcMode::Am } else { RlcMode::Um };
        let mut tx = tx_with(mode, CodelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(30),
            mtu: tcran_core::ByteSize(1000),
            ecn,
            ..CodelConfig::default()
        });
        let (mut pdus, mut dep, mut dropped) = (Vec::new(), Vec::new(), Vec::new());
        let (mut now, mut accepted, mut next_id) = (0u64, 0u64, 0u64);
        for op in ops {
            match op {
                Op::Enqueue { len, ect } => {
                    let e = if ect { Ecn::Ect0 } else { Ecn::NotEct };
                    if tx.enqueue(pkt(next_id, len, e), ms(now)).is_ok() {
                        accepted += 1;
                    }
                    next_id += 1;
                }
                Op::Fill { grant, dt_ms } => {
                    now += dt_ms;
                    let used = tx.fill(grant, ms(now), &mut pdus, &mut dep);
                    prop_assert!(used <= grant);
                    tx.drain_dropped(&mut dropped);
                }
            }
            let held = u64::from(tx.buffer_status().sdus_held);
            prop_assert_eq!(accepted, dep.len() as u64 + dropped.len() as u64 + held);
        }
        for (p, reason) in &dropped {
            prop_assert_eq!(*reason, DropReason::Codel);
            prop_assert!(!pdus.iter().any(|d| d.packet.id == p.id));
            if ecn {
                prop_assert_eq!(p.ecn, Ecn::NotEct, "ECT SDUs are marked instead");
            }
        }
    }
}
