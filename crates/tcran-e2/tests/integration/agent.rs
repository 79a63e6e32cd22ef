//! The sans-IO agent driven by a scripted RIC in the same process: E2 Setup,
//! subscriptions with timed indications, controls that change real
//! pipelines, refusals per RIC profile, Reset, Service Update, Removal.

use tcran_control::DrbKey;
use tcran_core::{Duration, Instant, QueueId};
use tcran_e2::agent::{Agent, AgentConfig, AgentState, RicProfile};
use tcran_e2::e2ap::{self, Action, ActionType, E2apPdu, RicRequestId};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::flexric_tc::{self, PlainControl, PlainIndication};
use tcran_e2::sm::{e2sm_tcran as tcsm, kpm, AnyModel};
use tcran_tc::queue::{FifoConfig, QueueKindConfig};
use tcran_tc::PipelineConfig;

const DRB: DrbKey = DrbKey::new(0x4601, 1);

fn node() -> FakeNode {
    let mut n = FakeNode::new();
    n.add_drb(
        DRB,
        &PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {})),
    )
    .unwrap();
    n
}

fn models() -> Vec<AnyModel> {
    vec![
        AnyModel::FlexricTc(flexric_tc::FlexricTc {
            drb: None,
            time_offset_us: 0,
        }),
        AnyModel::Kpm(kpm::Kpm::default()),
        AnyModel::TcRan(tcsm::TcRan::default()),
    ]
}

fn out(agent: &mut Agent) -> Vec<E2apPdu> {
    std::iter::from_fn(|| agent.poll_transmit())
        .map(|b| e2ap::decode(&b).unwrap())
        .collect()
}

/// The one PDU the agent sent.
fn one(agent: &mut Agent) -> [E2apPdu; 1] {
    let v = out(agent);
    let n = v.len();
    v.try_into().unwrap_or_else(|v| panic!("{n} PDUs: {v:?}"))
}

fn t(ms: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(ms)
}

/// Connects and completes E2 Setup; returns the agent.
fn ready(profile: RicProfile, node: &mut FakeNode) -> Agent {
    let mut a = Agent::new(AgentConfig::new(models(), profile));
    a.connected(node, t(0));
    let pdus = out(&mut a);
    let [E2apPdu::E2SetupRequest(req)] = pdus.as_slice() else {
        panic!("{pdus:?}")
    };
    // E2SM-TCRAN (246) is held back from a RIC that may be FlexRIC.
    let offered: &[u16] = match profile {
        RicProfile::Standard => &[146, 2, 246],
        RicProfile::Auto | RicProfile::Flexric => &[146, 2],
    };
    assert_eq!(
        req.functions.iter().map(|f| f.id).collect::<Vec<_>>(),
        offered
    );
    assert!(
        !req.components.is_empty(),
        "FlexRIC aborts on an empty component list"
    );
    let resp = E2apPdu::E2SetupResponse(req.accept(e2ap::GlobalRicId {
        plmn: [0, 0xf1, 0x10],
        ric_id: 7,
    }));
    a.handle(&e2ap::encode(&resp).unwrap(), node, t(1));
    assert_eq!(a.state(), AgentState::Ready);
    a
}

fn control(function: u16, message: Vec<u8>, instance: u16) -> Vec<u8> {
    e2ap::encode(&E2apPdu::ControlRequest(e2ap::ControlRequest {
        request: RicRequestId {
            requestor: 1021,
            instance,
        },
        function,
        call_process_id: None,
        header: vec![0; 4],
        message,
        ack_request: Some(true),
    }))
    .unwrap()
}

#[test]
fn flexric_subscription_gives_an_indication_every_period_until_deleted() {
    let mut n = node();
    let mut a = ready(RicProfile::Flexric, &mut n);
    let sub = E2apPdu::SubscriptionRequest(e2ap::SubscriptionRequest {
        request: RicRequestId {
            requestor: 1021,
            instance: 0,
        },
        function: 146,
        event_trigger: 1u32.to_le_bytes().to_vec(),
        actions: vec![Action {
            id: 0,
            kind: ActionType::Report,
            definition: None,
            subsequent: None,
        }],
    });
    a.handle(&e2ap::encode(&sub).unwrap(), &mut n, t(10));
    assert!(
        matches!(out(&mut a).as_slice(), [E2apPdu::SubscriptionResponse(r)] if r.admitted == [0])
    );
    assert_eq!(a.next_wakeup(), Some(t(11)));
    for ms in 11..=20 {
        a.on_timeout(&n, t(ms));
    }
    let inds = out(&mut a);
    assert_eq!(inds.len(), 10, "1 ms period over 10 ms");
    for p in &inds {
        let E2apPdu::Indication(i) = p else { panic!() };
        assert_eq!(i.sn, None, "FlexRIC profile sends no SN");
        assert_eq!(i.header, [0, 0, 0, 0]);
        let ind = PlainIndication::decode(&i.message).unwrap();
        assert_eq!(ind.queues.len(), 1);
    }
    // Late timer: the missed periods are skipped, not sent in a burst.
    a.on_timeout(&n, t(30));
    assert_eq!(out(&mut a).len(), 1);
    assert_eq!(a.stats().periods_skipped, 9);
    let del = E2apPdu::SubscriptionDeleteRequest(e2ap::SubscriptionDelete {
        request: RicRequestId {
            requestor: 1021,
            instance: 0,
        },
        function: 146,
    });
    a.handle(&e2ap::encode(&del).unwrap(), &mut n, t(31));
    assert!(matches!(
        out(&mut a).as_slice(),
        [E2apPdu::SubscriptionDeleteResponse(_)]
    ));
    a.on_timeout(&n, t(40));
    assert!(out(&mut a).is_empty());
}

#[test]
fn flexric_controls_change_the_pipeline_and_refusals_are_acknowledged() {
    let mut n = node();
    let mut a = ready(RicProfile::Flexric, &mut n);
    let add = PlainControl::QueueAdd {
        kind: 1,
        target_ms: 5,
        interval_ms: 100,
    }
    .encode();
    a.handle(&control(146, add, 1), &mut n, t(5));
    let [E2apPdu::ControlAcknowledge(ack)] = one(&mut a) else {
        panic!()
    };
    assert_eq!(ack.outcome.as_deref(), Some(&[0u8, 0, 0, 0][..]));
    let cfg = n.drb(DRB).unwrap().pipeline.config();
    assert_eq!(cfg.queues.len(), 2);
    assert_eq!(cfg.queues[1].kind.kind_name(), "codel");

    // Deleting a queue that does not exist: refused, acknowledged, counted.
    let before = n.drb(DRB).unwrap().pipeline.config();
    a.handle(
        &control(146, PlainControl::QueueDel { id: 9, kind: 0 }.encode(), 2),
        &mut n,
        t(6),
    );
    assert!(matches!(
        out(&mut a).as_slice(),
        [E2apPdu::ControlAcknowledge(_)]
    ));
    // Garbage: refused, acknowledged, counted.
    a.handle(&control(146, vec![9, 9, 9], 3), &mut n, t(7));
    assert!(matches!(
        out(&mut a).as_slice(),
        [E2apPdu::ControlAcknowledge(_)]
    ));
    assert_eq!(n.drb(DRB).unwrap().pipeline.config(), before);
    let s = a.stats();
    assert_eq!(
        (
            s.controls_applied,
            s.controls_refused,
            s.controls_refused_acknowledged
        ),
        (1, 2, 2)
    );
}

#[test]
fn standard_ric_gets_control_failure_with_a_cause() {
    let mut n = node();
    let mut a = ready(RicProfile::Standard, &mut n);
    a.handle(
        &control(146, PlainControl::QueueDel { id: 9, kind: 0 }.encode(), 1),
        &mut n,
        t(5),
    );
    let [E2apPdu::ControlFailure(f)] = one(&mut a) else {
        panic!()
    };
    assert_eq!(
        f.cause,
        e2ap::ric_request_cause(tcran_e2::asn::e2ap::CauseRICrequest::CONTROL_FAILED_TO_EXECUTE)
    );
    // An unknown RAN function.
    a.handle(&control(77, vec![], 2), &mut n, t(6));
    let [E2apPdu::ControlFailure(f)] = one(&mut a) else {
        panic!()
    };
    assert_eq!(
        f.cause,
        e2ap::ric_request_cause(tcran_e2::asn::e2ap::CauseRICrequest::RAN_FUNCTION_ID_INVALID)
    );
    // Bytes that are no PDU: Error Indication (never to FlexRIC).
    a.handle(&[0xff, 0x00], &mut n, t(7));
    assert!(matches!(
        out(&mut a).as_slice(),
        [E2apPdu::ErrorIndication(_)]
    ));
}

#[test]
fn tcran_model_deploys_a_pipeline_and_reports_on_condition() {
    let mut n = node();
    let mut a = ready(RicProfile::Standard, &mut n);
    // Condition: RLC sojourn above 10 ms, checked every 5 ms, rising edge.
    let sub = E2apPdu::SubscriptionRequest(e2ap::SubscriptionRequest {
        request: RicRequestId {
            requestor: 7,
            instance: 1,
        },
        function: 246,
        event_trigger: tcsm::event_trigger(&tcsm::Trigger::Condition {
            check_period_ms: 5,
            metric: tcsm::Metric::RlcSojournUs,
            threshold: 10_000,
            rising_edge_only: true,
        }),
        actions: vec![Action {
            id: 3,
            kind: ActionType::Report,
            definition: Some(tcsm::action_definition(&[DRB])),
            subsequent: None,
        }],
    });
    a.handle(&e2ap::encode(&sub).unwrap(), &mut n, t(0));
    assert!(matches!(
        out(&mut a).as_slice(),
        [E2apPdu::SubscriptionResponse(_)]
    ));
    a.on_timeout(&n, t(5));
    assert!(out(&mut a).is_empty(), "condition false: nothing");
    n.drb_mut(DRB).unwrap().lower.rlc_sojourn = Duration::from_millis(12);
    a.on_timeout(&n, t(10));
    let [E2apPdu::Indication(i)] = one(&mut a) else {
        panic!()
    };
    let (h, m) = tcsm::decode_indication(&i.header, &i.message).unwrap();
    assert_eq!(h.cause.0, 1);
    assert_eq!(m.reports.0.len(), 1);
    assert_eq!(m.reports.0[0].lower.rlc_sojourn_us.0, 12_000);
    a.on_timeout(&n, t(15));
    assert!(out(&mut a).is_empty(), "rising edge only");

    // Deploy CoDel + RR + 5G-BDP as the paper's low-latency xApp does.
    let target: PipelineConfig =
        toml::from_str("pacer = { kind = \"bdp\" }\n[[queues]]\nid = 0\nkind = \"codel\"\n")
            .unwrap();
    let (header, message) = tcsm::control(DRB, &::tcran_tc::Change::Deploy(target));
    let req = E2apPdu::ControlRequest(e2ap::ControlRequest {
        request: RicRequestId {
            requestor: 7,
            instance: 2,
        },
        function: 246,
        call_process_id: None,
        header,
        message,
        ack_request: None,
    });
    a.handle(&e2ap::encode(&req).unwrap(), &mut n, t(16));
    let [E2apPdu::ControlAcknowledge(ack)] = one(&mut a) else {
        panic!()
    };
    let Ok(tcsm::TcOutcome::Applied(cfg)) = tcsm::decode_outcome(ack.outcome.as_deref().unwrap())
    else {
        panic!()
    };
    assert!(cfg.contains("\"codel\""), "{cfg}");
    let p = n.drb(DRB).unwrap().pipeline.config();
    assert_eq!(p.pacer.kind_name(), "bdp");
    assert_eq!(p.queues[0].kind.kind_name(), "codel");

    // A control naming a queue that does not exist: failure with the reason.
    let (header, message) = tcsm::control(
        DRB,
        &::tcran_tc::Change::Controls(vec![::tcran_tc::Control::DeleteQueue { id: QueueId(5) }]),
    );
    let req = E2apPdu::ControlRequest(e2ap::ControlRequest {
        request: RicRequestId {
            requestor: 7,
            instance: 3,
        },
        function: 246,
        call_process_id: None,
        header,
        message,
        ack_request: None,
    });
    a.handle(&e2ap::encode(&req).unwrap(), &mut n, t(17));
    let [E2apPdu::ControlFailure(f)] = one(&mut a) else {
        panic!()
    };
    let Ok(tcsm::TcOutcome::Refused(why)) = tcsm::decode_outcome(f.outcome.as_deref().unwrap())
    else {
        panic!()
    };
    assert!(why.contains("no such queue"), "{why}");
}

/// An empty E2SM-TCRAN control list reads the configuration: acknowledged
/// with it, counted as a read (not as an applied control), and the node's
/// `apply` is never called for it; a read of a DRB that does not exist is
/// refused.
#[test]
fn tcran_model_counts_reads_apart_from_applied_controls() {
    let mut n = node();
    let mut a = ready(RicProfile::Standard, &mut n);
    let request = |instance, drb, change: &::tcran_tc::Change| {
        let (header, message) = tcsm::control(drb, change);
        e2ap::encode(&E2apPdu::ControlRequest(e2ap::ControlRequest {
            request: RicRequestId {
                requestor: 7,
                instance,
            },
            function: 246,
            call_process_id: None,
            header,
            message,
            ack_request: None,
        }))
        .unwrap()
    };
    let read = ::tcran_tc::Change::Controls(Vec::new());
    let before = n.drb(DRB).unwrap().pipeline.config();
    a.handle(&request(1, DRB, &read), &mut n, t(5));
    let [E2apPdu::ControlAcknowledge(ack)] = one(&mut a) else {
        panic!()
    };
    let Ok(tcsm::TcOutcome::Applied(cfg)) = tcsm::decode_outcome(ack.outcome.as_deref().unwrap())
    else {
        panic!()
    };
    assert_eq!(
        serde_json::from_str::<PipelineConfig>(&cfg).unwrap(),
        before,
        "the outcome is the configuration read"
    );
    let change = ::tcran_tc::Change::Controls(vec![::tcran_tc::Control::SetTotalLimit {
        limit_packets: Some(77),
    }]);
    a.handle(&request(2, DRB, &change), &mut n, t(6));
    assert!(matches!(
        out(&mut a).as_slice(),
        [E2apPdu::ControlAcknowledge(_)]
    ));
    a.handle(&request(3, DrbKey::new(9, 1), &read), &mut n, t(7));
    let [E2apPdu::ControlFailure(f)] = one(&mut a) else {
        panic!()
    };
    let Ok(tcsm::TcOutcome::Refused(why)) = tcsm::decode_outcome(f.outcome.as_deref().unwrap())
    else {
        panic!()
    };
    assert!(why.contains("does not exist"), "{why}");
    let s = a.stats();
    assert_eq!(
        (s.controls_applied, s.controls_read, s.controls_refused),
        (1, 1, 1)
    );
    assert_eq!(
        (n.applied, n.refused),
        (1, 0),
        "the node applied one change; the reads never reached its apply"
    );
}

#[test]
fn drb_changes_are_announced_by_service_update_except_to_flexric() {
    for (profile, expected) in [(RicProfile::Standard, 1), (RicProfile::Flexric, 0)] {
        let mut n = node();
        let mut a = ready(profile, &mut n);
        n.add_drb(
            DrbKey::new(0x4602, 1),
            &PipelineConfig::single_queue(QueueKindConfig::Fifo(FifoConfig {})),
        )
        .unwrap();
        a.refresh_functions(&n);
        let pdus = out(&mut a);
        assert_eq!(pdus.len(), expected);
        if let [E2apPdu::ServiceUpdate(u)] = pdus.as_slice() {
            let modified = u.modified.as_ref().unwrap();
            assert_eq!(modified.iter().map(|f| f.id).collect::<Vec<_>>(), [246]);
            assert!(u.added.is_none() && u.deleted.is_none());
        }
    }
}

#[test]
fn reset_and_removal_end_subscriptions() {
    let mut n = node();
    let mut a = ready(RicProfile::Standard, &mut n);
    let sub = E2apPdu::SubscriptionRequest(e2ap::SubscriptionRequest {
        request: RicRequestId {
            requestor: 1,
            instance: 1,
        },
        function: 146,
        event_trigger: 10u32.to_le_bytes().to_vec(),
        actions: vec![Action {
            id: 0,
            kind: ActionType::Report,
            definition: None,
            subsequent: None,
        }],
    });
    a.handle(&e2ap::encode(&sub).unwrap(), &mut n, t(0));
    out(&mut a);
    assert_eq!(a.jobs(), 1);
    let reset = E2apPdu::ResetRequest(e2ap::ResetRequest {
        transaction: 9,
        cause: e2ap::protocol_cause(6),
    });
    a.handle(&e2ap::encode(&reset).unwrap(), &mut n, t(1));
    assert!(matches!(out(&mut a).as_slice(), [E2apPdu::ResetResponse(r)] if r.transaction == 9));
    assert_eq!(a.jobs(), 0);
    let rm = E2apPdu::E2RemovalRequest { transaction: 4 };
    a.handle(&e2ap::encode(&rm).unwrap(), &mut n, t(2));
    assert!(matches!(
        out(&mut a).as_slice(),
        [E2apPdu::E2RemovalResponse(_)]
    ));
    assert_eq!(a.state(), AgentState::Removed);
}

#[test]
fn setup_failure_waits_the_time_to_wait_then_retries() {
    let mut n = node();
    let mut cfg = AgentConfig::new(models(), RicProfile::Standard);
    // Without jitter the retry comes exactly at the TimeToWait (E2AP
    // 8.3.1), the first failure's delay being below it.
    cfg.backoff.jitter = 0.0;
    let mut a = Agent::new(cfg);
    a.connected(&n, t(0));
    let [E2apPdu::E2SetupRequest(req)] = one(&mut a) else {
        panic!()
    };
    let fail = E2apPdu::E2SetupFailure(e2ap::E2SetupFailure {
        transaction: req.transaction,
        cause: e2ap::protocol_cause(6),
        time_to_wait: Some(1), // 2 s
        diagnostics: None,
    });
    a.handle(&e2ap::encode(&fail).unwrap(), &mut n, t(100));
    assert_eq!(a.next_wakeup(), Some(t(2100)));
    a.on_timeout(&n, t(2099));
    assert!(out(&mut a).is_empty());
    a.on_timeout(&n, t(2100));
    assert!(matches!(
        out(&mut a).as_slice(),
        [E2apPdu::E2SetupRequest(_)]
    ));
    // No answer: asked again after the setup timeout (5 s).
    a.on_timeout(&n, t(7100));
    let [E2apPdu::E2SetupRequest(req)] = one(&mut a) else {
        panic!()
    };
    assert_eq!(a.stats().setup_failures, 1);
    // The RIC fails it without a TimeToWait and closes the association:
    // the level stays at 2 s (never below what the RIC asked), doubled to
    // 4 s, and the drop that follows is not a second failure.
    let fail = E2apPdu::E2SetupFailure(e2ap::E2SetupFailure {
        transaction: req.transaction,
        cause: e2ap::protocol_cause(6),
        time_to_wait: None,
        diagnostics: None,
    });
    a.handle(&e2ap::encode(&fail).unwrap(), &mut n, t(8000));
    a.disconnected(t(8001));
    assert_eq!(a.connect_at(), Some(t(12000)));
    // The next connection fails too: 8 s.
    a.connect_failed(t(12000));
    assert_eq!(a.connect_at(), Some(t(20000)));
    assert_eq!(a.failures(), 3);
}

#[test]
fn only_a_successful_setup_resets_the_backoff() {
    let mut n = node();
    let mut cfg = AgentConfig::new(models(), RicProfile::Standard);
    cfg.backoff.jitter = 0.0;
    let mut a = Agent::new(cfg);
    assert_eq!(a.connect_at(), Some(t(0)));
    // A RIC that accepts TCP and closes at once: 100, 200, 400 ms, the
    // successful connects in between reset nothing.
    let mut now = 0;
    for expect in [100, 200, 400] {
        a.connected(&n, t(now));
        out(&mut a);
        a.disconnected(t(now));
        now += expect;
        assert_eq!(a.connect_at(), Some(t(now)));
    }
    a.connected(&n, t(now));
    let [E2apPdu::E2SetupRequest(req)] = one(&mut a) else {
        panic!()
    };
    let ok = E2apPdu::E2SetupResponse(req.accept(e2ap::GlobalRicId {
        plmn: [0, 0xf1, 0x10],
        ric_id: 1,
    }));
    a.handle(&e2ap::encode(&ok).unwrap(), &mut n, t(now));
    assert_eq!(a.state(), AgentState::Ready);
    assert_eq!(a.connect_at(), None);
    a.disconnected(t(now));
    assert_eq!(a.connect_at(), Some(t(now + 100)));
}

fn service_query() -> Vec<u8> {
    e2ap::encode(&E2apPdu::ServiceQuery(e2ap::ServiceQuery {
        transaction: 3,
        accepted: None,
    }))
    .unwrap()
}

/// A refused FlexRIC TC control (SHP ADD names no queue).
fn refused_control() -> Vec<u8> {
    control(146, hex("040000000000000000000000"), 9)
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn auto_follows_flexrics_rules_until_the_ric_queries_its_services() {
    let mut n = node();
    let mut a = ready(RicProfile::Auto, &mut n);
    // FlexRIC's rules: a refused control is acknowledged, never failed.
    a.handle(&refused_control(), &mut n, t(2));
    assert!(matches!(one(&mut a), [E2apPdu::ControlAcknowledge(_)]));
    // A subscription nothing of which is admitted stays unanswered
    // (FlexRIC's RIC aborts on RIC Subscription Failure, not on silence).
    let sub = |instance| {
        e2ap::encode(&E2apPdu::SubscriptionRequest(e2ap::SubscriptionRequest {
            request: RicRequestId {
                requestor: 1021,
                instance,
            },
            function: 2,
            event_trigger: vec![0xff],
            actions: vec![Action {
                id: 0,
                kind: ActionType::Report,
                definition: None,
                subsequent: None,
            }],
        }))
        .unwrap()
    };
    a.handle(&sub(4), &mut n, t(3));
    assert!(out(&mut a).is_empty());
    assert_eq!(a.stats().subscriptions_unanswered, 1);
    // A RIC that queries takes a Service Update: E2SM-TCRAN is added...
    a.handle(&service_query(), &mut n, t(4));
    let [E2apPdu::ServiceUpdate(u)] = one(&mut a) else {
        unreachable!()
    };
    let mut added: Vec<u16> = u.added.unwrap().iter().map(|f| f.id).collect();
    added.sort();
    assert_eq!(added, [2, 146, 246]);
    // ... and E2AP's failures are back.
    a.handle(&refused_control(), &mut n, t(5));
    assert!(matches!(one(&mut a), [E2apPdu::ControlFailure(_)]));
    a.handle(&sub(5), &mut n, t(6));
    assert!(matches!(one(&mut a), [E2apPdu::SubscriptionFailure(_)]));
    // A new association starts under FlexRIC's rules again.
    a.disconnected(t(7));
    a.connected(&n, t(8));
    let [E2apPdu::E2SetupRequest(req)] = one(&mut a) else {
        unreachable!()
    };
    assert!(req.functions.iter().all(|f| f.id != 246));
}

#[test]
fn flexric_answers_a_query_with_its_flexric_functions_and_keeps_its_rules() {
    let mut n = node();
    let mut a = ready(RicProfile::Flexric, &mut n);
    // A RIC that queries is not FlexRIC: it gets its answer (so tcran's
    // SDK need not wait out its timeout), and the answer lists only what
    // FlexRIC could take.
    a.handle(&service_query(), &mut n, t(2));
    let [E2apPdu::ServiceUpdate(u)] = one(&mut a) else {
        unreachable!()
    };
    let mut added: Vec<u16> = u.added.unwrap().iter().map(|f| f.id).collect();
    added.sort();
    assert_eq!(added, [2, 146]);
    a.handle(&refused_control(), &mut n, t(3));
    assert!(matches!(one(&mut a), [E2apPdu::ControlAcknowledge(_)]));
}

/// KPM's dialect follows the agent's rules: FlexRIC's at E2 Setup, the
/// standard after a RIC Service Query, FlexRIC's again on a new association.
#[test]
fn a_service_query_switches_kpm_to_the_standard_dialect() {
    let kpm_dialect = |a: &Agent| {
        a.config()
            .models
            .iter()
            .find_map(|m| match m {
                AnyModel::Kpm(k) => Some(k.dialect),
                _ => None,
            })
            .unwrap()
    };
    let mut n = node();
    let mut a = ready(RicProfile::Auto, &mut n);
    assert_eq!(kpm_dialect(&a), kpm::Dialect::Flexric);
    a.handle(&service_query(), &mut n, t(2));
    assert_eq!(kpm_dialect(&a), kpm::Dialect::Standard);
    a.disconnected(t(3));
    a.connected(&n, t(4));
    assert_eq!(kpm_dialect(&a), kpm::Dialect::Flexric);
    let mut standard = ready(RicProfile::Standard, &mut n);
    assert_eq!(kpm_dialect(&standard), kpm::Dialect::Standard);
    standard.handle(&service_query(), &mut n, t(2));
    assert_eq!(kpm_dialect(&standard), kpm::Dialect::Standard);
}
