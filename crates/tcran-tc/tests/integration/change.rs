//! `Pipeline::apply_change`: all or nothing, deploys that keep every
//! packet in order, typed refusals, and conservation under any sequence
//! of changes.

use crate::common::packet;
use proptest::prelude::*;
use tcran_core::{BitRate, ByteSize, Duration, Ecn, Instant, QueueId};
use tcran_tc::policer::{PolicerAction, PolicerConfig};
use tcran_tc::queue::{CodelConfig, FifoConfig, QueueKindConfig};
use tcran_tc::{Change, Control, Pipeline, PipelineConfig, QueueConfig, Refused};

const TWO_FLOWS: &str = r#"
    classifier = { kind = "filter", rules = [ { priority = 1, src_port = "10001", queue = 1 } ] }
    scheduler = { kind = "drr" }
    [[queues]]
    id = 0
    kind = "fifo"
    [[queues]]
    id = 1
    kind = "codel"
    limit_packets = 50
"#;

fn two_flows() -> Pipeline {
    toml::from_str::<PipelineConfig>(TWO_FLOWS)
        .unwrap()
        .build()
        .unwrap()
}

fn fifo(id: u16) -> QueueConfig {
    QueueConfig::new(id, QueueKindConfig::Fifo(FifoConfig {}))
}

/// Pushes `n` packets alternating between flows 0 and 1 (queues 0 and 1).
fn fill(p: &mut Pipeline, n: u64, now: Instant) {
    for id in 0..n {
        p.push(
            packet(id, (id % 2) as u16, 100 + id as u32, Ecn::NotEct, now),
            now,
        );
    }
}

fn drain_ids(p: &mut Pipeline, now: Instant) -> Vec<u64> {
    std::iter::from_fn(|| p.pull(now)).map(|x| x.id.0).collect()
}

#[test]
fn a_list_whose_third_control_fails_leaves_the_pipeline_as_it_was() {
    let t = Instant::from_millis(1);
    let (mut p, mut twin) = (two_flows(), two_flows());
    fill(&mut p, 40, Instant::ZERO);
    fill(&mut twin, 40, Instant::ZERO);
    let change = Change::Controls(vec![
        Control::AddQueue { queue: fifo(2) },
        Control::SetDefaultQueue { id: QueueId(2) },
        Control::SetTotalLimit {
            limit_packets: Some(0),
        },
        Control::DeleteQueue { id: QueueId(0) },
    ]);
    let refused = p.apply_change(&change, t).unwrap_err();
    let Refused::Control {
        index: 2,
        count: 4,
        ref error,
    } = refused
    else {
        panic!("{refused:?}")
    };
    assert_eq!(
        (error.field.as_str(), error.value.as_str()),
        ("limit_packets", "0")
    );
    assert_eq!(
        refused.to_string(),
        "control 3 of 4: limit_packets = 0: must be in 1..=10000000"
    );
    // Byte for byte as its twin that was never asked: configuration,
    // every statistic, nothing dropped, and the same packets coming out.
    assert_eq!(p.config(), twin.config());
    assert_eq!(p.stats(t), twin.stats(t));
    assert!(!p.has_dropped());
    assert_eq!(drain_ids(&mut p, t), drain_ids(&mut twin, t));
    assert_eq!(p.stats(t), twin.stats(t));
}

#[test]
fn deploy_keeps_every_queued_packet_in_order() {
    let t = Instant::from_millis(1);
    let mut p = two_flows();
    fill(&mut p, 40, Instant::ZERO);
    // Queues 0 and 1 are gone in the target: their packets move to the new
    // default queue 3, queue 0's first, each in arrival order.
    let target: PipelineConfig = toml::from_str(
        r#"
        default_queue = 3
        scheduler = { kind = "priority" }
        pacer = { kind = "bdp" }
        classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", queue = 2 } ] }
        [[queues]]
        id = 2
        kind = "fifo"
        [[queues]]
        id = 3
        kind = "fifo"
        priority = 1
        "#,
    )
    .unwrap();
    let applied = p.apply_change(&Change::Deploy(target.clone()), t).unwrap();
    assert_eq!(applied.config, target.build().unwrap().config());
    assert_eq!(applied.config, p.config());
    assert!(!p.has_dropped(), "a deploy loses nothing");
    assert_eq!(p.queued_packets(), 40);
    assert_eq!(p.queue_backlog(QueueId(3)).unwrap().0, 40);
    let mut expected: Vec<u64> = (0..40).step_by(2).collect();
    expected.extend((1..40).step_by(2));
    // The BDP pacer lets nothing go before an RLC report: remove it.
    p.apply_change(
        &Change::Control(Control::SetPacer {
            pacer: Default::default(),
        }),
        t,
    )
    .unwrap();
    assert_eq!(drain_ids(&mut p, t), expected);
    assert!(p.totals().conserved());
}

#[test]
fn a_deploy_changing_kinds_in_place_keeps_the_order_too() {
    let t = Instant::from_millis(1);
    let mut p = two_flows();
    fill(&mut p, 20, Instant::ZERO);
    let mut twin = two_flows();
    fill(&mut twin, 20, Instant::ZERO);
    let mut target = p.config();
    target.queues[0].kind = QueueKindConfig::Codel(CodelConfig::default());
    target.queues[1].kind = QueueKindConfig::Fifo(FifoConfig {});
    p.apply_change(&Change::Deploy(target), t).unwrap();
    assert_eq!(drain_ids(&mut p, t), drain_ids(&mut twin, t));
}

#[test]
fn refusals_are_typed_and_name_the_field() {
    let t = Instant::ZERO;
    let mut p = two_flows();
    let before = p.config();
    // One control: its own error, not numbered.
    let r = p
        .apply_change(&Change::Control(Control::DeleteQueue { id: QueueId(7) }), t)
        .unwrap_err();
    assert!(
        matches!(&r, Refused::Control { index: 0, count: 1, error } if error.field == "queue"),
        "{r:?}"
    );
    assert!(r.to_string().starts_with("queue = 7: no such queue"), "{r}");
    // A deploy whose target is invalid: the target's field.
    let mut target = p.config();
    target.queues[1].weight = 0;
    let r = p.apply_change(&Change::Deploy(target), t).unwrap_err();
    assert!(
        matches!(&r, Refused::InvalidTarget(e) if e.field == "queues[1].weight"),
        "{r:?}"
    );
    assert_eq!(r.config_error().unwrap().field, "queues[1].weight");
    // Every control applies, the result does not build: a policer
    // redirecting to a queue that does not exist.
    let PolicerConfig::TokenBucket {
        rate,
        burst,
        action,
        window,
        ..
    } = PolicerConfig::token_bucket(BitRate(1_000_000), ByteSize(1500), PolicerAction::Redirect);
    let policer = PolicerConfig::TokenBucket {
        rate,
        burst,
        action,
        window,
        redirect: Some(QueueId(256)),
    };
    let r = p
        .apply_change(
            &Change::Controls(vec![Control::SetPolicer {
                id: QueueId(0),
                policer: Some(policer),
            }]),
            t,
        )
        .unwrap_err();
    assert!(
        matches!(&r, Refused::InvalidResult(e) if e.field == "queues[0].policer.redirect"),
        "{r:?}"
    );
    assert!(r
        .to_string()
        .starts_with("the resulting pipeline would be invalid: "));
    assert_eq!(p.config(), before);
}

#[test]
fn an_empty_list_is_a_read() {
    let mut p = two_flows();
    let read = Change::Controls(Vec::new());
    assert!(read.is_read());
    assert_eq!(read.describe(), "");
    let applied = p.apply_change(&read, Instant::ZERO).unwrap();
    assert_eq!(applied.config, p.config());
}

#[test]
fn descriptions_name_what_changes() {
    let change = Change::Controls(vec![
        Control::AddQueue { queue: fifo(4) },
        Control::DeleteQueue { id: QueueId(1) },
        Control::SetTotalLimit {
            limit_packets: Some(9),
        },
    ]);
    assert_eq!(
        change.describe(),
        "add queue 4 fifo; delete queue 1; set total limit Some(9)"
    );
}

/// A control from a small pool, valid or not for the pipeline at hand.
fn control() -> impl Strategy<Value = Control> {
    prop_oneof![
        (0u16..5, 1u32..30).prop_map(|(id, limit)| {
            let mut q = fifo(id);
            q.limit_packets = Some(limit);
            Control::AddQueue { queue: q }
        }),
        (0u16..5, 1u32..30).prop_map(|(id, limit)| {
            let mut q = fifo(id);
            q.limit_packets = Some(limit);
            Control::ModifyQueue { queue: q }
        }),
        (0u16..5).prop_map(|id| Control::DeleteQueue { id: QueueId(id) }),
        (0u16..5).prop_map(|id| Control::SetDefaultQueue { id: QueueId(id) }),
        proptest::option::of(0u32..40)
            .prop_map(|limit_packets| Control::SetTotalLimit { limit_packets }),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Push { flow: u16, len: u32 },
    Pull { n: u8 },
    Change(Box<Change>),
}

fn op() -> impl Strategy<Value = Op> {
    let deploy = proptest::collection::btree_set(0u16..5, 1..4).prop_map(|ids| {
        let ids: Vec<u16> = ids.into_iter().collect();
        let rules: Vec<String> = ids
            .iter()
            .enumerate()
            .map(|(f, q)| {
                format!(
                    "{{ priority = {f}, src_port = \"{}\", queue = {q} }}",
                    10_000 + f
                )
            })
            .collect();
        let mut c: PipelineConfig = toml::from_str(&format!(
            "classifier = {{ kind = \"filter\", rules = [{}] }}\nqueues = []",
            rules.join(", ")
        ))
        .unwrap();
        c.queues = ids.iter().map(|id| fifo(*id)).collect();
        Change::Deploy(c)
    });
    prop_oneof![
        5 => (0u16..4, 40u32..1500).prop_map(|(flow, len)| Op::Push { flow, len }),
        3 => (1u8..6).prop_map(|n| Op::Pull { n }),
        2 => control().prop_map(|c| Op::Change(Box::new(Change::Control(c)))),
        2 => proptest::collection::vec(control(), 0..5).prop_map(|c| Op::Change(Box::new(Change::Controls(c)))),
        1 => deploy.prop_map(|d| Op::Change(Box::new(d))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// in = out + dropped + queued whatever changes come, applied or
    /// refused; a refused change changes neither the configuration nor
    /// what is queued; every drop is handed back.
    #[test]
    fn any_sequence_of_changes_conserves_packets(ops in proptest::collection::vec(op(), 1..150)) {
        let mut p = two_flows();
        let mut now = Instant::ZERO;
        let (mut id, mut out, mut dropped) = (0u64, 0u64, 0u64);
        for op in ops {
            now += Duration::from_micros(100);
            match op {
                Op::Push { flow, len } => {
                    id += 1;
                    p.push(packet(id, flow, len, Ecn::NotEct, now), now);
                }
                Op::Pull { n } => {
                    out += (0..n).filter(|_| p.pull(now).is_some()).count() as u64;
                }
                Op::Change(change) => {
                    let (config, queued) = (p.config(), p.queued_packets());
                    match p.apply_change(&change, now) {
                        Ok(applied) => prop_assert_eq!(applied.config, p.config()),
                        Err(_) => {
                            prop_assert_eq!(p.config(), config);
                            prop_assert_eq!(p.queued_packets(), queued);
                            prop_assert!(!p.has_dropped());
                        }
                    }
                }
            }
            dropped += p.drain_dropped().count() as u64;
            let t = p.totals();
            prop_assert!(t.conserved(), "{:?}", t);
            prop_assert_eq!(t.in_packets, t.out_packets + t.dropped_packets + t.queued_packets);
            prop_assert_eq!((t.out_packets, t.dropped_packets), (out, dropped));
        }
    }
}
