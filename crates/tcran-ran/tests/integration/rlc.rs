//! RLC oracle tests: header sizes from TS 38.322 §6.2.2 and TS 38.321
//! §6.1.2 computed by hand, reassembly(segmentation) round trips, UM
//! t-Reassembly loss, AM NACK/retransmission and the DynRLC departure rule.

use proptest::prelude::*;
use tcran_core::{DrbId, Duration, FiveTuple, Instant, Packet, PacketId};
use tcran_ran::rlc::{RlcConfig, RlcMode, RlcPdu, RlcRx, RlcTx, SduDeparture, StatusPdu};

fn pkt(id: u64, len: u32) -> Packet {
    Packet::new(PacketId(id), len, FiveTuple::default(), Instant::ZERO)
}

fn cfg(mode: RlcMode, sn: u8) -> RlcConfig {
    RlcConfig {
        mode,
        sn_length: Some(sn),
        ..RlcConfig::default()
    }
}

fn pair(c: &RlcConfig) -> (RlcTx, RlcRx) {
    let p = c.build().unwrap();
    (RlcTx::new(p.clone(), DrbId(1)), RlcRx::new(p, DrbId(1)))
}

const T0: Instant = Instant::ZERO;

/// Independent statement of the header sizes (TS 38.322 §6.2.2.2-4).
fn spec_rlc_header(mode: RlcMode, sn: u8, complete: bool, so: u32) -> u32 {
    let so_bytes = if so > 0 { 2 } else { 0 };
    match mode {
        RlcMode::Um if complete => 1,
        RlcMode::Um => (if sn == 6 { 1 } else { 2 }) + so_bytes,
        RlcMode::Am => (if sn == 12 { 2 } else { 3 }) + so_bytes,
    }
}

fn spec_mac_sub(rlc_pdu: u32) -> u32 {
    if rlc_pdu <= 255 {
        2
    } else {
        3
    }
}

#[test]
fn um_header_sizes_hand_computed() {
    let (mut tx, _) = pair(&cfg(RlcMode::Um, 12));
    let mut out = Vec::new();
    let mut dep = Vec::new();
    // Complete SDU of 100 B: 1 B UMD header + 2 B MAC subheader.
    tx.enqueue(pkt(0, 100), T0).unwrap();
    assert_eq!(tx.fill(200, T0, &mut out, &mut dep), 103);
    assert_eq!(
        (out[0].header, out[0].mac_subheader, out[0].bytes()),
        (1, 2, 103)
    );
    // 1000 B in grants 300, 300, 500 with a 12-bit SN:
    // first segment 2 B header, RLC PDU 297 > 255 -> 3 B subheader: 295 data;
    // middle 4 B header + 3 B subheader: 293 data; last 412 + 4 + 3 = 419.
    out.clear();
    tx.enqueue(pkt(1, 1000), T0).unwrap();
    assert_eq!(tx.fill(300, T0, &mut out, &mut dep), 300);
    assert_eq!(tx.fill(300, T0, &mut out, &mut dep), 300);
    assert_eq!(tx.fill(500, T0, &mut out, &mut dep), 419);
    let v: Vec<_> = out
        .iter()
        .map(|p| (p.so, p.len, p.header, p.last))
        .collect();
    assert_eq!(
        v,
        vec![
            (0, 295, 2, false),
            (295, 293, 4, false),
            (588, 412, 4, true)
        ]
    );
    // 6-bit SN: first segment 1 B; a 257-byte grant holds 1 + 254 (8-bit L).
    let (mut tx, _) = pair(&cfg(RlcMode::Um, 6));
    out.clear();
    tx.enqueue(pkt(2, 1000), T0).unwrap();
    assert_eq!(tx.fill(257, T0, &mut out, &mut dep), 257);
    assert_eq!(
        (out[0].header, out[0].len, out[0].mac_subheader),
        (1, 254, 2)
    );
    // Middle segment (1 + 2 SO) in 258 B: 3 + 253 = 256 needs a 16-bit L
    // (3 + 256 = 259 > 258), so 252 data bytes make a 255-byte RLC PDU with
    // an 8-bit L: 257 used, the last byte is MAC padding (TS 38.321 §6.1.2:
    // the padding subheader has no L field).
    assert_eq!(tx.fill(258, T0, &mut out, &mut dep), 257);
    assert_eq!(
        (out[1].header, out[1].len, out[1].mac_subheader),
        (3, 252, 2)
    );
}

#[test]
fn am_header_sizes_and_mac_subheader_boundary() {
    let (mut tx, _) = pair(&cfg(RlcMode::Am, 18));
    let mut out = Vec::new();
    let mut dep = Vec::new();
    // 252 B + 3 B AMD header = 255 B RLC PDU -> 2 B subheader.
    tx.enqueue(pkt(0, 252), T0).unwrap();
    assert_eq!(tx.fill(1000, T0, &mut out, &mut dep), 257);
    // 253 B + 3 = 256 -> 3 B subheader.
    tx.enqueue(pkt(1, 253), T0).unwrap();
    assert_eq!(tx.fill(1000, T0, &mut out, &mut dep), 259);
    // Segments: first 3 B, then 5 B (SO).
    tx.enqueue(pkt(2, 500), T0).unwrap();
    tx.fill(100, T0, &mut out, &mut dep);
    tx.fill(100, T0, &mut out, &mut dep);
    assert_eq!((out[2].header, out[2].len), (3, 95));
    assert_eq!((out[3].header, out[3].so, out[3].len), (5, 95, 93));
    let (mut tx, _) = pair(&cfg(RlcMode::Am, 12));
    out.clear();
    tx.enqueue(pkt(0, 500), T0).unwrap();
    tx.fill(100, T0, &mut out, &mut dep);
    tx.fill(100, T0, &mut out, &mut dep);
    assert_eq!((out[0].header, out[1].header), (2, 4));
}

#[test]
fn no_pdu_when_not_one_data_byte_fits() {
    let (mut tx, _) = pair(&cfg(RlcMode::Am, 18));
    let mut out = Vec::new();
    let mut dep = Vec::new();
    tx.enqueue(pkt(0, 100), T0).unwrap();
    // 3 B header + 2 B subheader + 1 data byte = 6.
    assert_eq!(tx.fill(5, T0, &mut out, &mut dep), 0);
    assert_eq!(tx.fill(6, T0, &mut out, &mut dep), 6);
    assert_eq!(out[0].len, 1);
}

#[test]
fn buffer_limit_tail_drops_whole_sdus() {
    let mut c = RlcConfig::um();
    c.buffer_limit = tcran_core::ByteSize(3000);
    let (mut tx, _) = pair(&c);
    assert!(tx.enqueue(pkt(0, 1500), T0).is_ok());
    assert!(tx.enqueue(pkt(1, 1500), T0).is_ok());
    let back = tx.enqueue(pkt(2, 1), T0).unwrap_err();
    assert_eq!(back.id, PacketId(2));
    let mut c = RlcConfig::um();
    c.buffer_limit_sdus = Some(2);
    let (mut tx, _) = pair(&c);
    tx.enqueue(pkt(0, 10), T0).unwrap();
    tx.enqueue(pkt(1, 10), T0).unwrap();
    assert!(tx.enqueue(pkt(2, 10), T0).is_err());
    let bs = tx.buffer_status();
    assert_eq!((bs.new_sdus, bs.new_payload_bytes), (2, 20));
    // 2 x (10 + 1 + 2).
    assert_eq!(bs.new_bytes, 26);
}

#[test]
fn um_departure_when_last_byte_sent_with_sojourn() {
    let (mut tx, _) = pair(&RlcConfig::um());
    let mut out = Vec::new();
    let mut dep = Vec::new();
    tx.enqueue(pkt(7, 1000), Instant::from_millis(3)).unwrap();
    tx.fill(600, Instant::from_millis(4), &mut out, &mut dep);
    assert!(dep.is_empty());
    tx.fill(600, Instant::from_millis(5), &mut out, &mut dep);
    assert_eq!(
        dep,
        vec![SduDeparture {
            packet_id: PacketId(7),
            len: 1000,
            sojourn: Duration::from_millis(2)
        }]
    );
}

fn segment_all(tx: &mut RlcTx, sdus: &[u32], grants: &[u32]) -> (Vec<RlcPdu>, u32) {
    for (i, &l) in sdus.iter().enumerate() {
        tx.enqueue(pkt(i as u64, l), T0).unwrap();
    }
    let mut out = Vec::new();
    let mut dep = Vec::new();
    let mut used_total = 0;
    let mut i = 0;
    while tx.buffer_status().new_sdus > 0 {
        let g = grants[i % grants.len()];
        i += 1;
        let before = out.len();
        let used = tx.fill(g, T0, &mut out, &mut dep);
        assert!(used <= g);
        used_total += used;
        // Exact fill: if data is left, fewer bytes than a minimal PDU remain.
        if tx.buffer_status().new_sdus > 0 {
            assert!(g - used < 5 + 3, "grant {g} used {used}");
        }
        assert_eq!(out[before..].iter().map(|p| p.bytes()).sum::<u32>(), used);
        assert!(i < 1_000_000);
    }
    (out, used_total)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn reassemble_segment_is_identity_with_exact_bytes(
        sdus in proptest::collection::vec(1u32..4000, 1..40),
        grants in proptest::collection::vec(1u32..5000, 1..20),
        am in any::<bool>(),
        long_sn in any::<bool>(),
        shuffle_seed in any::<u64>(),
    ) {
        let grants: Vec<u32> = grants.into_iter().map(|g| g.max(8)).collect();
        let (mode, sn) = match (am, long_sn) {
            (false, false) => (RlcMode::Um, 6),
            (false, true) => (RlcMode::Um, 12),
            (true, false) => (RlcMode::Am, 12),
            (true, true) => (RlcMode::Am, 18),
        };
        let (mut tx, mut rx) = pair(&cfg(mode, sn));
        let (mut pdus, used) = segment_all(&mut tx, &sdus, &grants);
        let expect: u32 = sdus.iter().sum::<u32>()
            + pdus.iter().map(|p| {
                let h = spec_rlc_header(mode, sn, p.complete, p.so);
                h + spec_mac_sub(h + p.len)
            }).sum::<u32>();
        prop_assert_eq!(used, expect);
        // Every payload byte went out once, in a first transmission.
        prop_assert_eq!(tx.first_tx_bytes(), sdus.iter().map(|&l| u64::from(l)).sum::<u64>());
        for p in &pdus {
            prop_assert_eq!(u32::from(p.header), spec_rlc_header(mode, sn, p.complete, p.so));
        }
        // AM tolerates any arrival order; UM within its window only, so
        // keep order for UM with a 6-bit SN.
        if mode == RlcMode::Am {
            let mut s = shuffle_seed;
            for i in (1..pdus.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                pdus.swap(i, (s >> 33) as usize % (i + 1));
            }
        }
        let mut got = Vec::new();
        for p in pdus {
            rx.on_pdu(p, T0, &mut got);
        }
        let mut ids: Vec<u64> = got.iter().map(|p| p.id.0).collect();
        if mode == RlcMode::Am {
            ids.sort_unstable();
        }
        prop_assert_eq!(ids, (0..sdus.len() as u64).collect::<Vec<_>>());
        for p in &got {
            prop_assert_eq!(p.len, sdus[p.id.0 as usize]);
        }
        // PDCP is told the COUNT of each SDU delivered, in delivery order,
        // and nothing is left held, whether an SDU went through the
        // reassembly buffer or, next in order and whole, past it.
        let got_ids: Vec<u64> = got.iter().map(|p| p.id.0).collect();
        prop_assert_eq!(rx.counts(), &got_ids[..]);
        prop_assert_eq!(rx.pending_sdus(), 0);
        if mode == RlcMode::Am {
            prop_assert!((0..sdus.len() as u64).all(|sn| rx.has_delivered(sn)));
            prop_assert!(!rx.has_delivered(sdus.len() as u64));
        }
    }
}

#[test]
fn um_lost_segment_discards_only_that_sdu_after_t_reassembly() {
    let (mut tx, mut rx) = pair(&RlcConfig::um());
    for i in 0..3 {
        tx.enqueue(pkt(i, 1000), T0).unwrap();
    }
    let mut pdus = Vec::new();
    let mut dep = Vec::new();
    while tx.buffer_status().new_sdus > 0 {
        tx.fill(400, T0, &mut pdus, &mut dep);
    }
    // Lose the PDU carrying the middle of SDU 1.
    let victim = pdus
        .iter()
        .position(|p| p.packet.id == PacketId(1) && p.so > 0 && !p.last)
        .unwrap();
    let lost_pdu = pdus.remove(victim);
    let t1 = Instant::from_millis(1);
    let mut got = Vec::new();
    for p in pdus {
        rx.on_pdu(p, t1, &mut got);
    }
    let ids: Vec<u64> = got.iter().map(|p| p.id.0).collect();
    assert_eq!(ids, vec![0, 2]);
    let wake = rx.next_wakeup().unwrap();
    assert_eq!(wake, t1 + Duration::from_millis(35));
    let mut lost = Vec::new();
    rx.on_timer(wake - Duration::from_nanos(1), &mut lost);
    assert!(lost.is_empty());
    rx.on_timer(wake, &mut lost);
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].id, PacketId(1));
    // A late notice from the MAC does not count it twice.
    let mut more = Vec::new();
    rx.on_pdu_lost(&lost_pdu, &mut more);
    assert!(more.is_empty());
    assert_eq!(rx.next_wakeup(), None);
}

/// TS 38.322 §5.3.4: a triggered STATUS is built at the transmission
/// opportunity, and t-StatusProhibit runs from then, not from the trigger:
/// a UE that waits for an uplink grant builds it at the grant.
#[test]
fn am_status_prohibit_runs_from_when_the_status_is_built() {
    let mut c = RlcConfig::am();
    c.t_status_prohibit = Duration::from_millis(25);
    let (mut tx, mut rx) = pair(&c);
    let ms = Instant::from_millis;
    let mut delivered = Vec::new();
    let mut send = |tx: &mut RlcTx, rx: &mut RlcRx, id: u64, now: Instant| {
        tx.enqueue(pkt(id, 100), now).unwrap();
        let (mut out, mut dep) = (Vec::new(), Vec::new());
        tx.fill(1000, now, &mut out, &mut dep);
        assert!(
            out.iter().all(|p| p.poll),
            "the last PDU in the buffer polls"
        );
        for p in out {
            rx.on_pdu(p, now, &mut delivered);
        }
    };
    send(&mut tx, &mut rx, 0, ms(0));
    assert_eq!(rx.status_at(), Some(Instant::ZERO), "triggered, may go now");
    assert_eq!(
        rx.next_timer(),
        None,
        "no reassembly timer: nothing missing"
    );
    // The grant comes 14 ms later: the STATUS is built then.
    assert!(rx.poll_status(ms(14)).is_some());
    assert_eq!(rx.status_at(), None);
    send(&mut tx, &mut rx, 1, ms(20));
    assert_eq!(rx.status_at(), Some(ms(39)), "prohibited until 14 + 25 ms");
    assert!(rx.poll_status(ms(38)).is_none());
    assert!(rx.poll_status(ms(39)).is_some());
    assert_eq!(delivered.len(), 2);
}

/// Drives an AM pair through a lossy link: PDUs whose index is in `drop`
/// never arrive. STATUS PDUs are delivered instantly.
#[test]
fn am_lost_pdu_is_nacked_retransmitted_and_delivered_once() {
    let mut c = RlcConfig::am();
    c.t_status_prohibit = Duration::from_millis(10);
    let (mut tx, mut rx) = pair(&c);
    let n = 20u64;
    for i in 0..n {
        tx.enqueue(pkt(i, 700), T0).unwrap();
    }
    let mut delivered = Vec::new();
    let mut departures: Vec<(Instant, SduDeparture)> = Vec::new();
    let mut sent = 0usize;
    let mut statuses: Vec<StatusPdu> = Vec::new();
    let mut first_retx_at = None;
    for ms in 0..400u64 {
        let now = Instant::from_millis(ms);
        tx.on_timer(now);
        let mut lost = Vec::new();
        rx.on_timer(now, &mut lost);
        assert!(lost.is_empty());
        let mut out = Vec::new();
        let mut dep = Vec::new();
        tx.fill(1000, now, &mut out, &mut dep);
        assert!(dep.is_empty(), "AM departs only on ACK");
        for p in out {
            sent += 1;
            if p.retx && first_retx_at.is_none() {
                first_retx_at = Some(now);
            }
            // Drop the 3rd and the 4th PDU on their first transmission.
            if !p.retx && (sent == 3 || sent == 4) {
                continue;
            }
            rx.on_pdu(p, now, &mut delivered);
        }
        if let Some(s) = rx.poll_status(now) {
            let mut dep = Vec::new();
            tx.on_status(&s, now, &mut dep);
            departures.extend(dep.into_iter().map(|d| (now, d)));
            statuses.push(s);
        }
    }
    let mut ids: Vec<u64> = delivered.iter().map(|p| p.id.0).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..n).collect::<Vec<_>>(), "each SDU exactly once");
    assert!(first_retx_at.is_some());
    // The retransmitted bytes are not sent for the first time again.
    assert_eq!(tx.first_tx_bytes(), n * 700);
    assert!(statuses.iter().any(|s| !s.nacks.is_empty()));
    let mut dep_ids: Vec<u64> = departures.iter().map(|(_, d)| d.packet_id.0).collect();
    dep_ids.sort_unstable();
    assert_eq!(dep_ids, (0..n).collect::<Vec<_>>());
    // Every departure happened when a STATUS acknowledged it, and the
    // sojourn is the time from enqueue (t = 0) to that STATUS.
    for (t, d) in &departures {
        assert_eq!(d.sojourn, t.saturating_since(T0));
    }
    assert!(tx.is_empty());
    let bs = tx.buffer_status();
    assert_eq!((bs.sdus_held, bs.retx_bytes, bs.new_bytes), (0, 0, 0));
}

#[test]
fn am_status_pdu_sizes() {
    use tcran_ran::rlc::{Nack, SoRange};
    let s = StatusPdu {
        ack_sn: 10,
        nacks: vec![
            Nack { sn: 3, so: None },
            Nack {
                sn: 5,
                so: Some(SoRange {
                    start: 100,
                    end: None,
                }),
            },
        ],
        sn_length: 18,
    };
    // 3 + 3 + (3 + 4).
    assert_eq!(s.bytes(), 13);
    let s12 = StatusPdu { sn_length: 12, ..s };
    assert_eq!(s12.bytes(), 3 + 2 + 6);
}

#[test]
fn am_poll_retransmit_recovers_a_lost_last_pdu() {
    let (mut tx, mut rx) = pair(&RlcConfig::am());
    tx.enqueue(pkt(0, 100), T0).unwrap();
    let mut out = Vec::new();
    let mut dep = Vec::new();
    tx.fill(1000, T0, &mut out, &mut dep);
    assert!(out[0].poll, "buffer empty after it: poll");
    // Lost. t-PollRetransmit (45 ms) fires and the SDU goes again with a poll.
    assert_eq!(tx.next_wakeup(), Some(Instant::from_millis(45)));
    let t = Instant::from_millis(45);
    tx.on_timer(t);
    out.clear();
    tx.fill(1000, t, &mut out, &mut dep);
    assert_eq!(out.len(), 1);
    assert!(out[0].retx && out[0].poll);
    let mut got = Vec::new();
    rx.on_pdu(out.pop().unwrap(), t, &mut got);
    assert_eq!(got.len(), 1);
    let s = rx.poll_status(t).unwrap();
    assert_eq!(s.ack_sn, 1);
    tx.on_status(&s, t, &mut dep);
    assert_eq!(dep.len(), 1);
    assert_eq!(tx.next_wakeup(), None);
}

/// `mac_in` is the first transmission of the SDU's last byte, whichever
/// PDU completes the SDU at the receiver: here the first segment (cloned
/// before the last byte was sent, so without the stamp) arrives last.
#[test]
fn delivered_sdu_carries_when_its_last_byte_was_first_sent() {
    for mode in [RlcMode::Um, RlcMode::Am] {
        let (mut tx, mut rx) = pair(&cfg(mode, 12));
        let (mut out, mut dep, mut got) = (Vec::new(), Vec::new(), Vec::new());
        let t = |ms| Instant::from_millis(ms);
        tx.enqueue(pkt(7, 1000), t(0)).unwrap();
        tx.fill(400, t(1), &mut out, &mut dep);
        tx.fill(400, t(2), &mut out, &mut dep);
        tx.fill(400, t(3), &mut out, &mut dep);
        assert_eq!(out.len(), 3, "{mode:?}");
        assert!(out[0].mac_in.is_none());
        assert_eq!(out[2].mac_in.get(), Some(t(3)));
        let mut pdus = std::mem::take(&mut out);
        pdus.rotate_left(1); // middle, last, then first
        for p in pdus {
            rx.on_pdu(p, t(4), &mut got);
        }
        assert_eq!(got.len(), 1, "{mode:?}");
        assert_eq!(got[0].stamps.mac_in.get(), Some(t(3)), "{mode:?}");
        assert_eq!(got[0].stamps.rlc_in.get(), Some(t(0)), "{mode:?}");
    }
}

/// The head-of-line age a MAC scheduler reads is the wait of the oldest
/// SDU with bytes still to send: new data in arrival order, and in AM a
/// NACKed SDU, older than any new one, goes back to the head.
#[test]
fn head_of_line_is_the_oldest_sdu_with_bytes_to_send() {
    let at = Instant::from_millis;
    let (mut tx, _) = pair(&cfg(RlcMode::Um, 12));
    let (mut out, mut dep) = (Vec::new(), Vec::new());
    assert_eq!(tx.head_of_line_arrival(), None);
    tx.enqueue(pkt(0, 100), at(0)).unwrap();
    tx.enqueue(pkt(1, 100), at(5)).unwrap();
    assert_eq!(tx.head_of_line_arrival(), Some(at(0)));
    // Half of SDU 0 sent: it still heads the line.
    tx.fill(52, at(6), &mut out, &mut dep);
    assert_eq!(tx.head_of_line_arrival(), Some(at(0)));
    tx.fill(60, at(7), &mut out, &mut dep);
    assert_eq!(tx.head_of_line_arrival(), Some(at(5)));
    tx.fill(200, at(8), &mut out, &mut dep);
    assert_eq!(tx.head_of_line_arrival(), None);

    // AM: SDU 0's only PDU is lost; SDU 2 arrives after both were sent.
    let mut c = RlcConfig::am();
    c.t_status_prohibit = Duration::from_millis(1);
    let (mut tx, mut rx) = pair(&c);
    tx.enqueue(pkt(0, 100), at(0)).unwrap();
    tx.enqueue(pkt(1, 100), at(1)).unwrap();
    out.clear();
    tx.fill(1000, at(1), &mut out, &mut dep);
    assert_eq!(out.len(), 2);
    tx.enqueue(pkt(2, 100), at(2)).unwrap();
    assert_eq!(tx.head_of_line_arrival(), Some(at(2)));
    let mut delivered = Vec::new();
    rx.on_pdu(out.pop().unwrap(), at(2), &mut delivered);
    let mut nacked_at = None;
    for ms in 2..200 {
        let now = at(ms);
        rx.on_timer(now, &mut Vec::new());
        tx.on_timer(now);
        if let Some(s) = rx.poll_status(now) {
            tx.on_status(&s, now, &mut Vec::new());
            if !s.nacks.is_empty() {
                nacked_at = Some(now);
                break;
            }
        }
    }
    assert!(nacked_at.is_some(), "the receiver NACKs SN 0");
    assert_eq!(
        tx.head_of_line_arrival(),
        Some(at(0)),
        "the NACKed SDU heads the line"
    );
}
