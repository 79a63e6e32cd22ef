//! `Pipeline::marked_packets`: every CE mark, whichever stage gave it;
//! `PushOutcome::Marked`: the arriving packet's.

use crate::common;

use common::packet;
use tcran_core::{DropReason, Duration, Ecn, Instant, QueueId};
use tcran_tc::{PipelineConfig, PushOutcome};

#[test]
fn marked_packets_counts_policer_marks_at_ingress() {
    // A 1 kB bucket refilling at 8 kbit/s (1 byte per ms): the first packet
    // fits, the second, ECN-capable, is marked at ingress (RFC 2697 meter,
    // out-of-profile action "mark"); the third, Not-ECT, is dropped.
    let config: PipelineConfig = toml::from_str(
        r#"
        [[queues]]
        id = 0
        kind = "fifo"
        policer = { kind = "token_bucket", rate = "8kbit/s", burst = "1000B", action = "mark" }
        "#,
    )
    .unwrap();
    let mut p = config.build().unwrap();
    let t = Instant::ZERO;
    let q = QueueId(0);
    assert_eq!(
        p.push(packet(1, 0, 1000, Ecn::Ect0, t), t),
        PushOutcome::Enqueued(q)
    );
    assert_eq!(p.marked_packets(), 0);
    assert_eq!(
        p.push(packet(2, 0, 1000, Ecn::Ect0, t), t),
        PushOutcome::Marked(q)
    );
    assert_eq!(p.marked_packets(), 1);
    assert_eq!(
        p.push(packet(3, 0, 1000, Ecn::NotEct, t), t),
        PushOutcome::Dropped(DropReason::Policer)
    );
    assert_eq!((p.marked_packets(), p.totals().dropped_packets), (1, 1));
}

#[test]
fn marked_packets_counts_codel_marks_at_egress() {
    let config: PipelineConfig =
        toml::from_str("[[queues]]\nid = 0\nkind = \"codel\"\necn = true").unwrap();
    let mut p = config.build().unwrap();
    let t = Instant::ZERO;
    for i in 0..10 {
        p.push(packet(i, 0, 1000, Ecn::Ect0, t), t);
    }
    // CoDel (target 5 ms, interval 100 ms) marks the head once the sojourn
    // stayed above target for an interval with more than an MTU queued
    // (RFC 8289 sec. 3.2, 4.2).
    let head = p.pull(t + Duration::from_millis(50)).unwrap();
    assert_eq!((head.ecn, p.marked_packets()), (Ecn::Ect0, 0));
    let head = p.pull(t + Duration::from_millis(200)).unwrap();
    assert_eq!((head.ecn, p.marked_packets()), (Ecn::Ce, 1));
}
