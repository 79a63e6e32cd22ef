//! Invariants of the pipeline under arbitrary operation sequences, including
//! live reconfiguration (ARCHITECTURE.md principle 4: in = out + dropped +
//! queued, for packets and bytes, always).

use crate::common;

use common::packet;
use proptest::prelude::*;
use std::collections::BTreeMap;
use tcran_core::{ByteSize, DropReason, Duration, Ecn, Instant, Packet, QueueId};
use tcran_tc::{Control, LowerLayerReport, Pipeline, PipelineConfig, QueueConfig};

#[derive(Debug, Clone)]
enum Op {
    Push { flow: u16, len: u32, ect: bool },
    Pull { n: u8 },
    Report { backlog: u32 },
    Advance { us: u32 },
    AddQueue { id: u16, limit: u32 },
    DeleteQueue { id: u16 },
    Shrink { id: u16, limit: u32 },
    Classify { flows_to: Vec<u16> },
    Scheduler { kind: u8 },
    TotalLimit { limit: Option<u32> },
    ByteLimit { bytes: u32 },
    Pacer { on: bool },
    Kind { codel: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u16..6, 40u32..1500, any::<bool>()).prop_map(|(flow, len, ect)| Op::Push { flow, len, ect }),
        4 => (1u8..8).prop_map(|n| Op::Pull { n }),
        1 => (0u32..20_000).prop_map(|backlog| Op::Report { backlog }),
        2 => (1u32..5_000).prop_map(|us| Op::Advance { us }),
        1 => (1u16..5, 1u32..20).prop_map(|(id, limit)| Op::AddQueue { id, limit }),
        1 => (0u16..5).prop_map(|id| Op::DeleteQueue { id }),
        1 => (0u16..5, 1u32..10).prop_map(|(id, limit)| Op::Shrink { id, limit }),
        1 => proptest::collection::vec(0u16..5, 6).prop_map(|flows_to| Op::Classify { flows_to }),
        1 => (0u8..5).prop_map(|kind| Op::Scheduler { kind }),
        1 => proptest::option::of(1u32..30).prop_map(|limit| Op::TotalLimit { limit }),
    ]
}

fn scheduler(kind: u8) -> tcran_tc::sched::SchedulerConfig {
    let toml = match kind {
        0 => r#"kind = "round_robin""#,
        1 => r#"kind = "drr""#,
        2 => r#"kind = "weighted""#,
        3 => r#"kind = "priority""#,
        _ => {
            r#"kind = "delay_based"
threshold = "2ms""#
        }
    };
    toml::from_str(toml).unwrap()
}

fn fifo(id: u16, limit: u32) -> QueueConfig {
    let mut q: QueueConfig = toml::from_str(&format!("id = {id}\nkind = \"fifo\"")).unwrap();
    q.limit_packets = Some(limit);
    q.priority = (id % 3) as u8;
    q.weight = 1 + id as u32;
    q
}

fn check(p: &mut Pipeline, drained: &mut u64, drained_bytes: &mut u64) {
    for d in p.drain_dropped() {
        *drained += 1;
        *drained_bytes += d.packet.len as u64;
    }
    let t = p.totals();
    assert!(t.conserved(), "conservation broken: {t:?}");
    assert_eq!(*drained, t.dropped_packets, "every drop is handed back");
    assert_eq!(*drained_bytes, t.dropped_bytes);
    let (mut pk, mut by) = (0, 0);
    for q in p.queue_ids().collect::<Vec<_>>() {
        let (a, b) = p.queue_backlog(q).unwrap();
        pk += a;
        by += b;
    }
    assert_eq!(
        (pk as u64, by),
        (t.queued_packets, t.queued_bytes),
        "queue backlogs add up"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn conservation_holds_under_any_sequence_including_live_reconfiguration(ops in proptest::collection::vec(op(), 1..200)) {
        let mut p = PipelineConfig::single_queue(Default::default()).build().unwrap();
        let mut now = Instant::ZERO;
        let (mut drained, mut drained_bytes) = (0u64, 0u64);
        let mut next_id = 0u64;
        let mut out = 0u64;
        for op in ops {
            match op {
                Op::Push { flow, len, ect } => {
                    next_id += 1;
                    let ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
                    p.push(packet(next_id, flow, len, ecn, now), now);
                }
                Op::Pull { n } => {
                    for _ in 0..n {
                        if p.pull(now).is_some() { out += 1; }
                    }
                }
                Op::Report { backlog } => p.on_report(&LowerLayerReport {
                    tti: Duration::from_millis(1), backlog_bytes: backlog as u64, ..Default::default()
                }, now),
                Op::Advance { us } => now += Duration::from_micros(us as u64),
                Op::AddQueue { id, limit } => { let _ = p.apply(Control::AddQueue { queue: fifo(id, limit) }, now); }
                Op::DeleteQueue { id } => { let _ = p.apply(Control::DeleteQueue { id: QueueId(id) }, now); }
                Op::Shrink { id, limit } => {
                    if p.exists(QueueId(id)) {
                        p.apply(Control::ModifyQueue { queue: fifo(id, limit) }, now).unwrap();
                        let (pk, _) = p.queue_backlog(QueueId(id)).unwrap();
                        prop_assert!(pk <= limit as usize, "shrunk queue sheds its excess");
                    }
                }
                Op::Classify { flows_to } => {
                    let rules: Vec<String> = flows_to.iter().enumerate()
                        .filter(|(_, q)| p.exists(QueueId(**q)))
                        .map(|(f, q)| format!("{{ priority = {f}, queue = {q} }}"))
                        .collect();
                    // Rules without match criteria match everything: the first wins.
                    let c = toml::from_str(&format!("kind = \"filter\"\nrules = [{}]", rules.join(", "))).unwrap();
                    p.apply(Control::SetClassifier { classifier: c }, now).unwrap();
                }
                Op::Scheduler { kind } => p.apply(Control::SetScheduler { scheduler: scheduler(kind) }, now).unwrap(),
                Op::TotalLimit { limit } => {
                    p.apply(Control::SetTotalLimit { limit_packets: limit }, now).unwrap();
                    if let Some(l) = limit { prop_assert!(p.queued_packets() <= l as usize); }
                }
                Op::ByteLimit { .. } | Op::Pacer { .. } | Op::Kind { .. } => unreachable!("not drawn here"),
            }
            check(&mut p, &mut drained, &mut drained_bytes);
        }
        prop_assert_eq!(out, p.totals().out_packets);
        // Everything still queued can be pulled out: nothing is stranded.
        while p.pull(now).is_some() {}
        check(&mut p, &mut drained, &mut drained_bytes);
        prop_assert_eq!(p.totals().queued_packets, 0);
    }

    #[test]
    fn packets_of_a_flow_leave_in_arrival_order(
        arrivals in proptest::collection::vec((0u16..8, 40u32..1500), 1..300),
        kind in 0u8..5,
        pulls_every in 1usize..5,
    ) {
        // Flows 0-2 go to queue 1, flows 3-5 to queue 2, the rest to the
        // default queue 0.
        let mut c: PipelineConfig = toml::from_str(r#"
            classifier = { kind = "filter", rules = [
                { priority = 1, src_port = "10000-10002", queue = 1 },
                { priority = 2, src_port = "10003-10005", queue = 2 },
            ] }
            [[queues]]
            id = 0
            kind = "fifo"
            [[queues]]
            id = 1
            kind = "fifo"
            priority = 1
            [[queues]]
            id = 2
            kind = "fifo"
            weight = 3
        "#).unwrap();
        c.scheduler = scheduler(kind);
        let mut p = c.build().unwrap();
        let mut now = Instant::ZERO;
        let mut last: BTreeMap<u32, u64> = BTreeMap::new();
        let mut seen = 0;
        for (i, (flow, len)) in arrivals.iter().enumerate() {
            now += Duration::from_micros(100);
            p.push(packet(i as u64 + 1, *flow, *len, Ecn::NotEct, now), now);
            if i % pulls_every == 0 {
                if let Some(out) = p.pull(now) {
                    let f = out.flow.unwrap().0;
                    prop_assert!(last.get(&f).is_none_or(|prev| *prev < out.id.0), "flow {f} reordered");
                    last.insert(f, out.id.0);
                    seen += 1;
                }
            }
        }
        while let Some(out) = p.pull(now) {
            let f = out.flow.unwrap().0;
            prop_assert!(last.get(&f).is_none_or(|prev| *prev < out.id.0), "flow {f} reordered");
            last.insert(f, out.id.0);
            seen += 1;
        }
        prop_assert_eq!(seen, arrivals.len());
    }
}

/// What a bearer does with an arriving packet (tcran-gnb's `Drb::push`):
/// `Pipeline::pass_through` when `short_cut` and it can, otherwise `push`
/// then `pull` until nothing comes; what leaves goes to `out`.
fn arrive(
    p: &mut Pipeline,
    mut packet: Packet,
    now: Instant,
    short_cut: bool,
    out: &mut Vec<Packet>,
) {
    if short_cut && p.pass_through(&mut packet, now) {
        out.push(packet);
        return;
    }
    p.push(packet, now);
    while let Some(x) = p.pull(now) {
        out.push(x);
    }
}

/// Everything of a pipeline a user can observe, for comparing two.
fn observed(p: &mut Pipeline, now: Instant) -> impl PartialEq + std::fmt::Debug {
    let dropped: Vec<(Packet, DropReason)> =
        p.drain_dropped().map(|d| (d.packet, d.reason)).collect();
    let mut queued = Vec::new();
    p.for_each_queued(|x| queued.push(x.clone()));
    (
        p.stats(now),
        p.config(),
        p.lower_state(),
        p.marked_packets(),
        p.next_wakeup(now),
        dropped,
        queued,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The short cut of the one-FIFO, no-pacer pipeline changes nothing a
    /// user can see: the same packets leave with the same stamps, and
    /// every counter, drop and later decision is the same as through
    /// `push` and `pull`, whatever the configuration becomes meanwhile
    /// (other queues, schedulers, pacers, limits: the short cut must step
    /// aside when they are there).
    #[test]
    fn passing_through_is_push_then_pull(ops in proptest::collection::vec(pass_op(), 1..200)) {
        let mut short = PipelineConfig::single_queue(Default::default()).build().unwrap();
        let mut general = PipelineConfig::single_queue(Default::default()).build().unwrap();
        let mut now = Instant::ZERO;
        let mut next_id = 0u64;
        let (mut out_short, mut out_general) = (Vec::new(), Vec::new());
        for op in ops {
            match op {
                Op::Push { flow, len, ect } => {
                    next_id += 1;
                    let ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
                    let x = packet(next_id, flow, len, ecn, now);
                    arrive(&mut short, x.clone(), now, true, &mut out_short);
                    arrive(&mut general, x, now, false, &mut out_general);
                }
                Op::Advance { us } => now += Duration::from_micros(us as u64),
                op => {
                    apply(&mut short, &op, now, &mut out_short);
                    apply(&mut general, &op, now, &mut out_general);
                }
            }
            prop_assert_eq!(&out_short, &out_general);
            prop_assert_eq!(observed(&mut short, now), observed(&mut general, now));
        }
    }
}

/// The operations of [`op`], with more arrivals, and changes that make
/// the short cut step aside or come back: queue 0 limited to a number of
/// bytes (`ByteLimit`), a static pacer on or off (`Pacer`), queue 0 a
/// CoDel queue or a FIFO again (`Kind`).
fn pass_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u16..6, 40u32..1500, any::<bool>()).prop_map(|(flow, len, ect)| Op::Push { flow, len, ect }),
        6 => op(),
        1 => (64u32..3000).prop_map(|bytes| Op::ByteLimit { bytes }),
        1 => any::<bool>().prop_map(|on| Op::Pacer { on }),
        1 => any::<bool>().prop_map(|codel| Op::Kind { codel }),
    ]
}

/// Applies a non-arrival operation to `p`; what a pull lets go goes to `out`.
fn apply(p: &mut Pipeline, op: &Op, now: Instant, out: &mut Vec<Packet>) {
    match op {
        Op::Push { .. } | Op::Advance { .. } => unreachable!("done by the caller"),
        Op::Pull { n } => out.extend((0..*n).filter_map(|_| p.pull(now))),
        Op::Report { backlog } => p.on_report(
            &LowerLayerReport {
                tti: Duration::from_millis(1),
                backlog_bytes: *backlog as u64,
                ..Default::default()
            },
            now,
        ),
        Op::AddQueue { id, limit } => {
            let _ = p.apply(
                Control::AddQueue {
                    queue: fifo(*id, *limit),
                },
                now,
            );
        }
        Op::DeleteQueue { id } => {
            let _ = p.apply(Control::DeleteQueue { id: QueueId(*id) }, now);
        }
        Op::Shrink { id, limit } => {
            let _ = p.apply(
                Control::ModifyQueue {
                    queue: fifo(*id, *limit),
                },
                now,
            );
        }
        Op::Classify { flows_to } => {
            let rules: Vec<String> = flows_to
                .iter()
                .enumerate()
                .filter(|(_, q)| p.exists(QueueId(**q)))
                .map(|(f, q)| format!("{{ priority = {f}, queue = {q} }}"))
                .collect();
            let c = toml::from_str(&format!(
                "kind = \"filter\"\nrules = [{}]",
                rules.join(", ")
            ))
            .unwrap();
            p.apply(Control::SetClassifier { classifier: c }, now)
                .unwrap();
        }
        Op::Scheduler { kind } => p
            .apply(
                Control::SetScheduler {
                    scheduler: scheduler(*kind),
                },
                now,
            )
            .unwrap(),
        Op::TotalLimit { limit } => p
            .apply(
                Control::SetTotalLimit {
                    limit_packets: *limit,
                },
                now,
            )
            .unwrap(),
        Op::ByteLimit { bytes } => {
            let mut q = fifo(0, 1000);
            q.limit_packets = None;
            q.limit_bytes = Some(ByteSize(*bytes as u64));
            p.apply(Control::ModifyQueue { queue: q }, now).unwrap();
        }
        Op::Pacer { on } => {
            let pacer = if *on {
                "kind = \"static\"\nlimit_bytes = \"3kB\""
            } else {
                "kind = \"none\""
            };
            p.apply(
                Control::SetPacer {
                    pacer: toml::from_str(pacer).unwrap(),
                },
                now,
            )
            .unwrap();
        }
        Op::Kind { codel } => {
            let mut q = fifo(0, 1000);
            if *codel {
                q.kind = toml::from_str("kind = \"codel\"").unwrap();
            }
            p.apply(Control::ModifyQueue { queue: q }, now).unwrap();
        }
    }
}
