//! Run-time control as an xApp drives it: nothing queued is lost silently.

use crate::common;

use common::packet;
use tcran_core::{DropReason, Ecn, Instant, QueueId};
use tcran_tc::{Control, PipelineConfig, PushOutcome, QueueConfig};

fn two_queues() -> tcran_tc::Pipeline {
    let c: PipelineConfig = toml::from_str(
        r#"
        classifier = { kind = "filter", rules = [ { priority = 1, queue = 1 } ] }
        [[queues]]
        id = 0
        kind = "fifo"
        limit_packets = 5
        [[queues]]
        id = 1
        kind = "fifo"
        "#,
    )
    .unwrap();
    c.build().unwrap()
}

#[test]
fn deleting_a_queue_moves_its_packets_to_the_default_queue_in_order() {
    let mut p = two_queues();
    let t = Instant::ZERO;
    for i in 1..=3 {
        assert_eq!(
            p.push(packet(i, 0, 100, Ecn::NotEct, t), t),
            PushOutcome::Enqueued(QueueId(1))
        );
    }
    p.apply(Control::DeleteQueue { id: QueueId(1) }, t).unwrap();
    assert!(!p.exists(QueueId(1)));
    assert_eq!(p.queue_backlog(QueueId(0)), Some((3, 300)));
    let ids: Vec<u64> = std::iter::from_fn(|| p.pull(t)).map(|p| p.id.0).collect();
    assert_eq!(ids, vec![1, 2, 3]);
    // The classifier still names queue 1: its packets now go to the default
    // queue and are counted as such.
    assert_eq!(
        p.push(packet(9, 0, 100, Ecn::NotEct, t), t),
        PushOutcome::Enqueued(QueueId(0))
    );
    assert_eq!(p.stats(t).classifier.missing_queue, 1);
}

#[test]
fn moving_into_a_full_default_queue_sheds_the_excess_as_reconfigured() {
    let mut p = two_queues();
    let t = Instant::ZERO;
    for i in 1..=8 {
        p.push(packet(i, 0, 100, Ecn::NotEct, t), t);
    }
    p.apply(Control::DeleteQueue { id: QueueId(1) }, t).unwrap();
    let dropped: Vec<_> = p.drain_dropped().collect();
    assert_eq!(dropped.len(), 3, "default queue holds at most 5");
    assert!(dropped.iter().all(|d| d.reason == DropReason::Reconfigured));
    let stats = p.stats(t);
    let q0 = stats.queues.iter().find(|q| q.id == QueueId(0)).unwrap();
    assert_eq!(q0.drops.get(DropReason::Reconfigured), 3);
    assert!(stats.totals.conserved());
}

#[test]
fn lowering_a_limit_drops_the_newest_excess_with_reason_reconfigured() {
    let mut p = two_queues();
    let t = Instant::ZERO;
    for i in 1..=6 {
        p.push(packet(i, 0, 100, Ecn::NotEct, t), t);
    }
    let mut q: QueueConfig = toml::from_str("id = 1\nkind = \"fifo\"\nlimit_packets = 2").unwrap();
    q.limit_packets = Some(2);
    p.apply(Control::ModifyQueue { queue: q }, t).unwrap();
    let dropped: Vec<u64> = p.drain_dropped().map(|d| d.packet.id.0).collect();
    assert_eq!(dropped, vec![6, 5, 4, 3]);
    let kept: Vec<u64> = std::iter::from_fn(|| p.pull(t)).map(|p| p.id.0).collect();
    assert_eq!(kept, vec![1, 2]);
}

#[test]
fn the_default_queue_cannot_be_deleted_and_failed_commands_change_nothing() {
    let mut p = two_queues();
    let t = Instant::ZERO;
    let before = p.config();
    let e = p
        .apply(Control::DeleteQueue { id: QueueId(0) }, t)
        .unwrap_err();
    assert!(
        e.to_string().contains("default queue cannot be deleted"),
        "{e}"
    );
    let e = p
        .apply(Control::DeleteQueue { id: QueueId(7) }, t)
        .unwrap_err();
    assert!(e.to_string().contains("no such queue"), "{e}");
    let e = p
        .apply(
            Control::AddQueue {
                queue: toml::from_str("id = 1\nkind = \"fifo\"").unwrap(),
            },
            t,
        )
        .unwrap_err();
    assert!(e.to_string().contains("exists already"), "{e}");
    let bad_sched = toml::from_str("kind = \"drr\"\nquantum = \"1B\"").unwrap();
    assert!(p
        .apply(
            Control::SetScheduler {
                scheduler: bad_sched
            },
            t
        )
        .is_err());
    assert_eq!(p.config(), before);
}

#[test]
fn rules_can_be_added_modified_and_deleted_live() {
    let mut p = two_queues();
    let t = Instant::ZERO;
    p.apply(
        Control::AddQueue {
            queue: toml::from_str("id = 2\nkind = \"fifo\"").unwrap(),
        },
        t,
    )
    .unwrap();
    p.apply(
        Control::ModifyRule {
            rule: toml::from_str("priority = 1\nqueue = 2").unwrap(),
        },
        t,
    )
    .unwrap();
    assert_eq!(
        p.push(packet(1, 0, 100, Ecn::NotEct, t), t),
        PushOutcome::Enqueued(QueueId(2))
    );
    p.apply(Control::DeleteRule { priority: 1 }, t).unwrap();
    assert_eq!(
        p.push(packet(2, 0, 100, Ecn::NotEct, t), t),
        PushOutcome::Enqueued(QueueId(0))
    );
    assert!(p.apply(Control::DeleteRule { priority: 1 }, t).is_err());
}

#[test]
fn control_commands_read_from_toml_and_json() {
    let c: Control = toml::from_str("op = \"delete_queue\"\nid = 3").unwrap();
    assert_eq!(c, Control::DeleteQueue { id: QueueId(3) });
    let c: Control =
        serde_json::from_str(r#"{"op":"add_queue","queue":{"id":4,"kind":"fifo"}}"#).unwrap();
    assert!(matches!(c, Control::AddQueue { .. }));
    assert!(toml::from_str::<Control>("op = \"delete_queue\"\nid = 3\nextra = 1").is_err());
}

#[test]
fn the_config_after_live_changes_regroups_queue_banks() {
    let c: PipelineConfig =
        toml::from_str("[[queues]]\nid = 0\ncount = 8\nkind = \"fifo\"").unwrap();
    let mut p = c.build().unwrap();
    assert_eq!(p.config().queues.len(), 1);
    assert_eq!(p.config().queues[0].count, 8);
    p.apply(Control::DeleteQueue { id: QueueId(3) }, Instant::ZERO)
        .unwrap();
    let counts: Vec<(u16, u16)> = p
        .config()
        .queues
        .iter()
        .map(|q| (q.id.0, q.count))
        .collect();
    assert_eq!(counts, vec![(0, 3), (4, 4)]);
    // The reported config rebuilds an equivalent pipeline.
    let again = p.config().build().unwrap();
    assert_eq!(again.queue_ids().count(), 7);
}
