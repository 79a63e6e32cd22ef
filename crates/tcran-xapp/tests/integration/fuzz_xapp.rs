//! The fuzz target's body (`tcran_xapp::fuzzing::termination`) on stable
//! `cargo test`: real node PDUs (answers to the outstanding requests,
//! indications, updates) as seeds, then random mutations of them.

use proptest::prelude::*;
use tcran_control::DrbKey;
use tcran_e2::e2ap::{self, E2apPdu, RicRequestId};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::{e2sm_tcran as tcsm, ServiceModel};
use tcran_xapp::fuzzing;

fn rid(instance: u16) -> RicRequestId {
    RicRequestId {
        requestor: tcran_xapp::termination::REQUESTOR,
        instance,
    }
}

/// Frames a node could send: answers to requests 1-3, an indication with
/// a real report, a service update, and a stray indication.
fn seed() -> Vec<u8> {
    let mut node = FakeNode::new();
    node.add_drb(DrbKey::new(1, 1), &fifo()).unwrap();
    let model = tcsm::TcRan::default();
    let action = e2ap::Action {
        id: 1,
        kind: e2ap::ActionType::Report,
        definition: None,
        subsequent: None,
    };
    let trigger = tcsm::event_trigger(&tcsm::Trigger::Periodic { period_ms: 1 });
    let mut job = model.subscribe(&trigger, &action, &node).unwrap();
    let (header, message) = model
        .indicate(&mut job.state, &node, tcran_core::Instant::ZERO)
        .remove(0);
    let pdus = vec![
        E2apPdu::SubscriptionResponse(e2ap::SubscriptionResponse {
            request: rid(1),
            function: 246,
            admitted: vec![1],
            not_admitted: None,
        }),
        E2apPdu::Indication(e2ap::Indication {
            request: rid(1),
            function: 246,
            action: 1,
            sn: Some(0),
            kind: e2ap::IndicationType::Report,
            header,
            message,
            call_process_id: None,
        }),
        E2apPdu::ControlAcknowledge(e2ap::ControlAcknowledge {
            request: rid(2),
            function: 246,
            call_process_id: None,
            outcome: None,
        }),
        E2apPdu::ServiceUpdate(e2ap::ServiceUpdate {
            transaction: 4,
            added: None,
            modified: Some(vec![model.ran_function(&node)]),
            deleted: None,
        }),
        E2apPdu::SubscriptionFailure(e2ap::SubscriptionFailure {
            request: rid(3),
            function: 2,
            cause: e2ap::ric_request_cause(1),
            diagnostics: None,
        }),
    ];
    let mut out = Vec::new();
    for p in pdus {
        let b = e2ap::encode(&p).unwrap();
        // The body's frames are at most 255 bytes long.
        if b.len() <= 255 {
            out.push(b.len() as u8);
            out.extend_from_slice(&b);
        }
    }
    out
}

fn fifo() -> tcran_tc::PipelineConfig {
    tcran_tc::PipelineConfig::single_queue(tcran_tc::queue::QueueKindConfig::Fifo(
        tcran_tc::queue::FifoConfig {},
    ))
}

#[test]
fn the_seed_runs_through_every_procedure() {
    let s = seed();
    assert!(s.len() > 100, "the seed carries several PDUs");
    fuzzing::termination(&s);
    // The libFuzzer target's seed corpus is this seed
    // (`TCRAN_BLESS=1 cargo test -p tcran-xapp --test integration fuzz_xapp::` rewrites it).
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds/xapp_termination/session");
    if std::env::var_os("TCRAN_BLESS").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &s).unwrap();
    }
    let committed = std::fs::read(&file).expect("fuzz/seeds/xapp_termination/session");
    fuzzing::termination(&committed);
}

fn mutate(seed: &[u8], ops: &[(u8, usize, u8)]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for &(op, at, v) in ops {
        if b.is_empty() {
            break;
        }
        let i = at % b.len();
        match op % 4 {
            0 => b[i] ^= 1 << (v % 8),
            1 => b[i] = v,
            2 => b.truncate(i),
            _ => b.insert(i, v),
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mutated_node_traffic_never_panics(ops in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 1..12)) {
        fuzzing::termination(&mutate(&seed(), &ops));
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        fuzzing::termination(&data);
    }
}
