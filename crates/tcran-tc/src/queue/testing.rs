//! Helpers for the queue unit tests: packets, times and the conservation
//! harness every kind runs under proptest.

use crate::stage::{Events, Queue};
use proptest::prelude::*;
use std::collections::BTreeSet;
use tcran_core::{Ecn, FiveTuple, Instant, Packet, PacketId};

pub(crate) fn ms(x: u64) -> Instant {
    Instant::from_millis(x)
}

pub(crate) fn us(x: u64) -> Instant {
    Instant::from_micros(x)
}

/// A packet of `len` bytes with ECN field `ecn`, enqueued at `at`.
pub(crate) fn pkt(id: u64, len: u32, ecn: Ecn, at: Instant) -> Packet {
    let mut p = Packet::new(PacketId(id), len, FiveTuple::default(), at);
    p.ecn = ecn;
    p.enqueued_at = at;
    p
}

/// One step of a random workload. Gaps are in microseconds before the step.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Enqueue { len: u32, ecn: Ecn, gap_us: u64 },
    Dequeue { gap_us: u64 },
    PopOldest,
    PopNewest,
    PushRaw { len: u32, ecn: Ecn },
}

fn ecn() -> impl Strategy<Value = Ecn> {
    prop_oneof![
        Just(Ecn::NotEct),
        Just(Ecn::Ect0),
        Just(Ecn::Ect1),
        Just(Ecn::Ce)
    ]
}

/// Arrivals outnumber departures so queues build up and the AQMs act; gaps
/// up to 30 ms let sojourns cross every default target.
pub(crate) fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => (40u32..1500, ecn(), 0u64..3_000).prop_map(|(len, ecn, gap_us)| Op::Enqueue { len, ecn, gap_us }),
        4 => (0u64..30_000).prop_map(|gap_us| Op::Dequeue { gap_us }),
        1 => Just(Op::PopOldest),
        1 => Just(Op::PopNewest),
        1 => (40u32..1500, ecn()).prop_map(|(len, ecn)| Op::PushRaw { len, ecn }),
    ];
    proptest::collection::vec(op, 1..600)
}

/// Runs `ops` against `q` (with a 300-packet tail-drop limit standing in
/// for the pipeline's) and checks that every packet offered is, exactly
/// once, either handed out, dropped with a reason, or still held, in packets
/// and in bytes; and that only ECN-capable packets come out CE-marked.
pub(crate) fn check_conservation(q: &mut dyn Queue, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut ev = Events::default();
    let mut now = Instant::ZERO;
    let (mut in_pkts, mut in_bytes) = (0u64, 0u64);
    let mut out: Vec<Packet> = Vec::new();
    let mut offered_ecn = Vec::new();
    let mut id = 0u64;
    for op in ops {
        match *op {
            Op::Enqueue { len, ecn, gap_us } => {
                now += tcran_core::Duration::from_micros(gap_us);
                if q.packets() >= 300 {
                    continue;
                }
                id += 1;
                in_pkts += 1;
                in_bytes += len as u64;
                offered_ecn.push(ecn);
                q.enqueue(pkt(id, len, ecn, now), now, &mut ev);
            }
            Op::Dequeue { gap_us } => {
                now += tcran_core::Duration::from_micros(gap_us);
                out.extend(q.dequeue(now, &mut ev));
            }
            Op::PopOldest => out.extend(q.pop_oldest()),
            Op::PopNewest => out.extend(q.pop_newest()),
            Op::PushRaw { len, ecn } => {
                id += 1;
                in_pkts += 1;
                in_bytes += len as u64;
                offered_ecn.push(ecn);
                q.push_raw(pkt(id, len, ecn, now));
            }
        }
        let held_before = q.packets();
        prop_assert_eq!(
            in_pkts,
            out.len() as u64 + ev.dropped.len() as u64 + held_before as u64
        );
        prop_assert_eq!(ev.drop_counts.total(), ev.dropped.len() as u64);
    }
    let (held, held_bytes) = (q.packets(), q.bytes());
    let mut drained = Vec::new();
    while let Some(p) = q.pop_oldest() {
        drained.push(p);
    }
    prop_assert_eq!(q.packets(), 0);
    prop_assert_eq!(q.bytes(), 0);
    prop_assert_eq!(drained.len(), held);
    prop_assert_eq!(
        drained.iter().map(|p| p.len as u64).sum::<u64>(),
        held_bytes
    );
    let bytes_out: u64 = out.iter().map(|p| p.len as u64).sum();
    let bytes_dropped: u64 = ev.dropped.iter().map(|d| d.packet.len as u64).sum();
    prop_assert_eq!(in_bytes, bytes_out + bytes_dropped + held_bytes);
    let mut ids = BTreeSet::new();
    for p in out
        .iter()
        .chain(ev.dropped.iter().map(|d| &d.packet))
        .chain(drained.iter())
    {
        prop_assert!(ids.insert(p.id), "packet {:?} seen twice", p.id);
        if p.ecn == Ecn::Ce {
            let offered = offered_ecn[p.id.0 as usize - 1];
            prop_assert!(offered.is_ect(), "a Not-ECT packet came out CE");
        }
    }
    prop_assert_eq!(ids.len() as u64, in_pkts);
    Ok(())
}
