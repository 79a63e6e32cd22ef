//! `tcran_gnb::Gnb`, the RAN node of one cell, as an E2 node: the KPM
//! measurements come out in TS 28.552's units from the node's own
//! counters ("no value" without samples), the TC view is the node's, and
//! changes have the node's refusal semantics (all or nothing).

use crate::common::node::{node, packet, prb_split, run_until, two_saturated_ues};
use tcran_control::{DrbKey, RanNode};
use tcran_core::{DrbId, Duration, Instant, QueueId, Rnti};
use tcran_e2::agent::{Agent, AgentConfig, RicProfile};
use tcran_e2::e2ap::{self, E2apPdu, RicRequestId};
use tcran_e2::sm::flexric_tc::{self, PlainControl};
use tcran_e2::sm::kpm::{self, Value};
use tcran_e2::sm::AnyModel;
use tcran_gnb::Gnb;
use tcran_tc::queue::{CodelConfig, QueueKindConfig};
use tcran_tc::{Change, Control, QueueConfig, Refused};

/// 5 MHz at 15 kHz: 25 PRBs (TS 38.101-1 Table 5.3.2-1), 1-ms slots.
const CELL: &str = r#"
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 20 }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "um", buffer_limit = "10MB" }
"#;

const DRB: DrbKey = DrbKey::new(1, 1);

fn measure_all(a: &tcran_control::KpmCounters, b: &tcran_control::KpmCounters) -> Vec<Value> {
    kpm::MEASUREMENTS
        .iter()
        .map(|m| kpm::measure(m, a, b))
        .collect()
}

#[test]
fn a_saturated_cell_reports_every_prb_used() {
    let mut gnb = node(CELL);
    for i in 0..2000 {
        gnb.downlink(packet(1, i, 1500, Instant::ZERO), Instant::ZERO);
    }
    let (cell0, drb0) = (gnb.kpm_cell(), gnb.kpm_drb(DRB).unwrap());
    run_until(&mut gnb, Instant::ZERO + Duration::from_millis(100));
    let (cell1, drb1) = (gnb.kpm_cell(), gnb.kpm_drb(DRB).unwrap());
    let cell = measure_all(&cell0, &cell1);
    // RRU.PrbUsedDl, RRU.PrbAvailDl: 25 per slot; RRU.PrbTotDl: 100 %.
    assert_eq!(
        &cell[4..],
        &[Value::Integer(25), Value::Integer(25), Value::Integer(100)]
    );
    // The UE's only DRB carries every PRB of the cell.
    let drb = measure_all(&drb0, &drb1);
    assert_eq!(&drb[4..], &cell[4..]);
    // DRB.UEThpDl: a full transport block per 1-ms slot (TS 38.214 TBS at
    // MCS 20, 25 PRBs), less the RLC/MAC headers.
    let mcs = tcran_ran::phy::mcs::Mcs::new(tcran_ran::phy::mcs::McsTable::Qam64, 20).unwrap();
    let full_kbps = f64::from(tcran_ran::phy::tbs::bytes_per_slot(mcs, 25, 1).unwrap()) * 8.0;
    let Value::Real(thp) = drb[0] else {
        panic!("{drb:?}")
    };
    assert!(
        thp <= full_kbps && thp > 0.97 * full_kbps,
        "{thp} vs {full_kbps}"
    );
    assert!(matches!(drb[1], Value::Real(d) if d > 0.0), "{drb:?}");
    // The lower layers as the TC view shows them.
    let v = gnb.tc_view(DRB, gnb.now()).unwrap();
    assert_eq!(v.lower.mcs, 20);
    assert!(v.lower.rlc_backlog_bytes > 0 && v.lower.rlc_backlog_sdus > 0);
    assert!(
        v.lower.rlc_sojourn > Duration::from_millis(50),
        "{:?}",
        v.lower
    );
    assert_eq!(
        v.lower.mac_prbs,
        gnb.kpm_cell().prb_used_dl,
        "the UE had every PRB"
    );
    assert!(v.lower.mac_tx_bytes >= v.lower.rlc_tx_bytes && v.lower.rlc_tx_bytes > 0);
    let (stats, lower) = gnb.tc_stats(DRB, gnb.now()).unwrap();
    assert_eq!((stats, lower), (v.stats, v.lower));
}

#[test]
fn no_samples_means_no_value() {
    let mut gnb = node(CELL);
    run_until(&mut gnb, Instant::ZERO + Duration::from_millis(10));
    let a = gnb.kpm_drb(DRB).unwrap();
    run_until(&mut gnb, Instant::ZERO + Duration::from_millis(20));
    let b = gnb.kpm_drb(DRB).unwrap();
    let m = measure_all(&a, &b);
    // No burst and no SDU: throughput and delay have no value; volumes are
    // zero; the slots were there, unused.
    assert_eq!(
        m,
        [
            Value::NoValue,
            Value::NoValue,
            Value::Integer(0),
            Value::Integer(0),
            Value::Integer(0),
            Value::Integer(25),
            Value::Integer(0)
        ]
    );
    // One 84-byte packet half-way into a slot: UM sends it at the next
    // slot boundary, 0.5 ms later = 5 units of 0.1 ms (DRB.RlcSduDelayDl);
    // one slot empties the buffer, so still no throughput sample.
    let at = Instant::ZERO + Duration::from_micros(20_500);
    gnb.downlink(packet(1, 1, 84, at), at);
    run_until(&mut gnb, Instant::ZERO + Duration::from_millis(30));
    let c = gnb.kpm_drb(DRB).unwrap();
    let m = measure_all(&b, &c);
    assert_eq!(m[0], Value::NoValue);
    assert_eq!(m[1], Value::Real(5.0));
    assert_eq!(c.pdcp_sdu_bits_dl - b.pdcp_sdu_bits_dl, 84 * 8);
}

#[test]
fn drbs_are_listed_in_order() {
    let mut gnb = node(
        r#"
        [cell]
        bandwidth_mhz = 5
        [[ues]]
        rnti = 9
        channel = { kind = "mcs", mcs = 20 }
        [[ues.drbs]]
        id = 2
        [[ues.drbs]]
        id = 1
        [[ues]]
        rnti = 3
        channel = { kind = "mcs", mcs = 20 }
    "#,
    );
    let mut v = Vec::new();
    RanNode::drbs(&gnb, &mut v);
    assert_eq!(v, [DrbKey::new(3, 1), DrbKey::new(9, 1), DrbKey::new(9, 2)]);
    // The UE's PRBs are counted once, on its first DRB.
    for i in 0..50 {
        gnb.downlink(packet(9, i, 1500, Instant::ZERO), Instant::ZERO);
    }
    run_until(&mut gnb, Instant::ZERO + Duration::from_millis(20));
    let prbs: Vec<u64> = v
        .iter()
        .map(|d| gnb.kpm_drb(*d).unwrap().prb_used_dl)
        .collect();
    assert_eq!(prbs[0], 0, "RNTI 3 had nothing to send");
    assert_eq!(prbs[1], 0, "counted on RNTI 9's first configured DRB, id 2");
    assert_eq!(prbs[2], gnb.kpm_cell().prb_used_dl);
    assert!(prbs[2] > 0);
}

#[test]
fn changes_have_the_nodes_refusal_semantics() {
    let mut gnb = node(CELL);
    let before = gnb.drb(Rnti(1), DrbId(1)).unwrap().config();
    let codel = QueueConfig::new(1, QueueKindConfig::Codel(CodelConfig::default()));
    // All or nothing: the second control fails, the first is not kept.
    let err = RanNode::apply(
        &mut gnb,
        DRB,
        &Change::Controls(vec![
            Control::AddQueue {
                queue: codel.clone(),
            },
            Control::DeleteQueue { id: QueueId(7) },
        ]),
        Instant::ZERO,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            Refused::Control {
                index: 1,
                count: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("control 2 of 2"), "{err}");
    assert_eq!(gnb.drb(Rnti(1), DrbId(1)).unwrap().config(), before);
    // The same refusal as the node's own control surface gives.
    let direct = gnb
        .apply(
            Rnti(1),
            DrbId(1),
            &Change::Control(Control::DeleteQueue { id: QueueId(7) }),
            Instant::ZERO,
        )
        .unwrap_err();
    let via_e2 = RanNode::apply(
        &mut gnb,
        DRB,
        &Change::Controls(vec![Control::DeleteQueue { id: QueueId(7) }]),
        Instant::ZERO,
    )
    .unwrap_err();
    assert_eq!(via_e2, direct);
    // A DRB that does not exist.
    let err = RanNode::apply(
        &mut gnb,
        DrbKey::new(1, 5),
        &Change::Controls(vec![]),
        Instant::ZERO,
    )
    .unwrap_err();
    assert_eq!(err, Refused::NoSuchDrb);
    // Applied.
    RanNode::apply(
        &mut gnb,
        DRB,
        &Change::Controls(vec![Control::AddQueue { queue: codel }]),
        Instant::ZERO,
    )
    .unwrap();
    let after = gnb.drb(Rnti(1), DrbId(1)).unwrap().config();
    assert_eq!(after.queues.len(), 2);
}

/// A FlexRIC TC control through the agent ends up in the node's pipeline.
#[test]
fn the_agent_controls_the_node() {
    let mut gnb = node(CELL);
    let mut agent = Agent::new(AgentConfig::new(
        vec![AnyModel::FlexricTc(flexric_tc::FlexricTc::default())],
        RicProfile::Standard,
    ));
    agent.connected(&gnb, Instant::ZERO);
    let Ok(E2apPdu::E2SetupRequest(req)) = e2ap::decode(&agent.poll_transmit().unwrap()) else {
        panic!("E2 Setup first")
    };
    let resp = E2apPdu::E2SetupResponse(req.accept(e2ap::GlobalRicId {
        plmn: [0, 0xf1, 0x10],
        ric_id: 1,
    }));
    agent.handle(&e2ap::encode(&resp).unwrap(), &mut gnb, Instant::ZERO);
    let control = |message: Vec<u8>| {
        e2ap::encode(&E2apPdu::ControlRequest(e2ap::ControlRequest {
            request: RicRequestId {
                requestor: 1,
                instance: 1,
            },
            function: 146,
            call_process_id: None,
            header: vec![0; 4],
            message,
            ack_request: Some(true),
        }))
        .unwrap()
    };
    let codel = PlainControl::QueueAdd {
        kind: 1,
        target_ms: 5,
        interval_ms: 100,
    };
    agent.handle(&control(codel.encode()), &mut gnb, Instant::ZERO);
    assert!(matches!(
        e2ap::decode(&agent.poll_transmit().unwrap()),
        Ok(E2apPdu::ControlAcknowledge(_))
    ));
    let cfg = gnb.drb(Rnti(1), DrbId(1)).unwrap().config();
    assert_eq!(cfg.queues.len(), 2);
    assert_eq!(cfg.queues[1].kind.kind_name(), "codel");
    // A control the node refuses: Control Failure, nothing changed.
    let del = PlainControl::QueueDel { id: 9, kind: 1 };
    agent.handle(&control(del.encode()), &mut gnb, Instant::ZERO);
    assert!(matches!(
        e2ap::decode(&agent.poll_transmit().unwrap()),
        Ok(E2apPdu::ControlFailure(_))
    ));
    assert_eq!(gnb.drb(Rnti(1), DrbId(1)).unwrap().config(), cfg);
}

/// FlexRIC's MAC, RLC, PDCP and GTP models read the node's own counters:
/// over a saturated period the MAC record's bytes are the RLC record's
/// PDU bytes, its PRBs are the cell's 25 per 1-ms slot, the buffers are
/// the RLC's, and each report's `dl_curr_tbs` is the growth of
/// `dl_aggr_tbs` since the previous one.
#[test]
fn flexrics_monitoring_models_report_the_nodes_counters() {
    use tcran_e2::sm::flexric_stats::{
        FlexricStats, GtpTunnel, MacUe, PdcpBearer, RlcBearer, StatsKind, HEADER,
    };
    use tcran_e2::sm::plain::PlainList;
    use tcran_e2::sm::{JobState, ServiceModel};
    let mut gnb = node(CELL);
    for i in 0..2000 {
        gnb.downlink(packet(1, i, 1500, Instant::ZERO), Instant::ZERO);
    }
    let models = FlexricStats::all(1_000_000);
    let action = e2ap::Action {
        id: 0,
        kind: e2ap::ActionType::Report,
        definition: None,
        subsequent: None,
    };
    let mut jobs: Vec<JobState> = models
        .iter()
        .map(|m| {
            m.subscribe(&10u32.to_le_bytes(), &action, &gnb)
                .unwrap()
                .state
        })
        .collect();
    let mut report = |gnb: &Gnb, at_ms: u64| -> Vec<Vec<u8>> {
        let now = Instant::ZERO + Duration::from_millis(at_ms);
        models
            .iter()
            .zip(&mut jobs)
            .map(|(m, j)| {
                let mut inds = m.indicate(j, gnb, now);
                assert_eq!(inds.len(), 1);
                let (h, msg) = inds.remove(0);
                assert_eq!(h, HEADER);
                msg
            })
            .collect()
    };
    run_until(&mut gnb, Instant::ZERO + Duration::from_millis(10));
    let first = report(&gnb, 10);
    run_until(&mut gnb, Instant::ZERO + Duration::from_millis(30));
    let second = report(&gnb, 30);
    assert_eq!(models.map(|m| m.kind), StatsKind::ALL);
    let mac = |m: &[u8]| PlainList::<MacUe>::decode("MAC", m).unwrap();
    let (mac1, mac2) = (mac(&first[0]), mac(&second[0]));
    let rlc = PlainList::<RlcBearer>::decode("RLC", &second[1]).unwrap();
    let pdcp = PlainList::<PdcpBearer>::decode("PDCP", &second[2]).unwrap();
    let gtp = PlainList::<GtpTunnel>::decode("GTP", &second[3]).unwrap();
    // Node clock (30 ms) plus the offset to the Unix epoch given (1 s).
    assert_eq!(mac2.tstamp_us, 1_030_000);
    let (m1, m2) = (mac1.records[0], mac2.records[0]);
    let (r, p, g) = (rlc.records[0], pdcp.records[0], gtp.records[0]);
    assert_eq!(m2.rnti, 1);
    assert!(m2.dl_aggr_tbs > 0);
    assert_eq!(m2.dl_curr_tbs, m2.dl_aggr_tbs - m1.dl_aggr_tbs);
    // 20 saturated 1-ms slots of 25 PRBs between the reports (11..=30),
    // 31 since the start (0..=30).
    assert_eq!(m2.dl_sched_rb, 20 * 25);
    assert_eq!(m2.dl_aggr_prb, 31 * 25);
    assert_eq!(m2.dl_mcs1, 20);
    assert_eq!(u64::from(r.txpdu_bytes), m2.dl_aggr_tbs);
    assert_eq!(r.txsdu_bytes, m2.dl_aggr_bytes_sdus);
    assert_eq!(r.txbuf_occ_bytes, m2.bsr);
    assert!(
        r.txbuf_occ_pkts > 0 && r.txsdu_wt_us > 0,
        "a saturated buffer"
    );
    assert_eq!((r.rnti, r.mode, r.rbid), (1, 1, 1), "RNTI 1, UM, DRB 1");
    // PDCP saw every SDU the core sent so far.
    assert_eq!(
        u64::from(p.txsdu_bytes),
        gnb.kpm_drb(DRB).unwrap().pdcp_sdu_bits_dl / 8
    );
    assert_eq!((p.rnti, p.mode, p.rbid), (1, 1, 1));
    assert_eq!(g.rnti, 1);
    assert_eq!(m2.dl_bler, 0.0, "no block error configured");
}

/// The MAC record's `dl_bler` is the share of the UE's transport blocks
/// that failed (HARQ NACKs), here of a cell configured with a 20 % block
/// error rate.
#[test]
fn flexrics_mac_record_reports_the_harq_nack_share_as_bler() {
    use tcran_e2::sm::flexric_stats::{FlexricStats, MacUe, StatsKind};
    use tcran_e2::sm::plain::PlainList;
    use tcran_e2::sm::ServiceModel;
    let mut gnb = node(&CELL.replace("bandwidth_mhz = 5", "bandwidth_mhz = 5\n    bler = 0.2"));
    for i in 0..20_000 {
        gnb.downlink(packet(1, i, 1500, Instant::ZERO), Instant::ZERO);
    }
    let mac = FlexricStats::all(0)
        .into_iter()
        .find(|m| m.kind == StatsKind::Mac)
        .unwrap();
    let action = e2ap::Action {
        id: 0,
        kind: e2ap::ActionType::Report,
        definition: None,
        subsequent: None,
    };
    let mut job = mac
        .subscribe(&1u32.to_le_bytes(), &action, &gnb)
        .unwrap()
        .state;
    let end = Instant::ZERO + Duration::from_millis(2000);
    run_until(&mut gnb, end);
    let (_, msg) = mac.indicate(&mut job, &gnb, end).remove(0);
    let bler = PlainList::<MacUe>::decode("MAC", &msg).unwrap().records[0].dl_bler;
    assert!((bler - 0.2).abs() < 0.03, "dl_bler {bler}");
}

/// FlexRIC's MAC record carries the node's HARQ counters: the histogram
/// of transmissions, the TBs given up in its fifth slot (FlexRIC's
/// `dlsch_errors`), the PRBs of retransmissions, and as `dl_bler` the
/// failed share of the transmissions, near the cell's configured 20 %.
#[test]
fn flexrics_mac_record_carries_the_harq_counters() {
    use tcran_e2::sm::flexric_stats::{FlexricStats, MacUe};
    use tcran_e2::sm::plain::PlainList;
    use tcran_e2::sm::ServiceModel;
    let mut gnb = node(&CELL.replace("bandwidth_mhz = 5", "bandwidth_mhz = 5\n    bler = 0.2"));
    for i in 0..5000 {
        gnb.downlink(packet(1, i, 1500, Instant::ZERO), Instant::ZERO);
    }
    let end = Instant::ZERO + Duration::from_millis(400);
    run_until(&mut gnb, end);
    let mac = &FlexricStats::all(0)[0];
    let action = e2ap::Action {
        id: 0,
        kind: e2ap::ActionType::Report,
        definition: None,
        subsequent: None,
    };
    let mut job = mac
        .subscribe(&10u32.to_le_bytes(), &action, &gnb)
        .unwrap()
        .state;
    let (_, msg) = mac.indicate(&mut job, &gnb, end).remove(0);
    let r: MacUe = PlainList::<MacUe>::decode("MAC", &msg).unwrap().records[0];
    let h = gnb.bearer(DRB, end).unwrap().harq;
    assert!(h.tx[1] > 0, "{h:?}");
    let low = |v: u64| v as u32;
    assert_eq!(
        r.dl_harq,
        [
            low(h.tx[0]),
            low(h.tx[1]),
            low(h.tx[2]),
            low(h.tx[3]),
            low(h.lost)
        ]
    );
    assert_eq!(r.dl_aggr_retx_prb, low(h.retx_prbs));
    // Saturated: every TB, first or again, takes the cell's 25 PRBs.
    assert_eq!(
        r.dl_aggr_retx_prb,
        25 * (r.dl_harq[1] + r.dl_harq[2] + r.dl_harq[3])
    );
    let sent: u64 = h.tx.iter().sum();
    let failed = sent - h.tx[0] + h.lost;
    assert_eq!(r.dl_bler, (failed as f64 / sent as f64) as f32);
    assert!((r.dl_bler - 0.2).abs() < 0.06, "{}", r.dl_bler);
}

/// FlexRIC's SLICE control on the MAC: two saturated UEs share a 25-PRB
/// cell about evenly under round robin; the stock xApp's kind of control
/// (static slices [0, 4] and [5, 24], one UE in each) makes the split
/// 5 / 20 PRBs per slot within the next second of the node's time, and a
/// DEL of the second slice gives the first one every UE again.
#[test]
fn a_slice_control_changes_two_ues_prb_split() {
    use tcran_e2::sm::flexric_slice::FlexricSlice;
    use tcran_e2::sm::flexric_slice_codec::{
        self as sc, Slice, SliceConf, SliceControl, SliceIndication, SliceParams, UeAssoc, UeSlice,
    };
    use tcran_e2::sm::{ControlOutcome, JobState, ServiceModel};
    let mut gnb = two_saturated_ues();
    let before = prb_split(&mut gnb, 0, 200);
    assert!(
        (before.0 - 12.5).abs() < 1.5 && (before.1 - 12.5).abs() < 1.5,
        "{before:?}"
    );

    let mut model = FlexricSlice::default();
    let st = |pos_low, pos_high| SliceParams::Static { pos_high, pos_low };
    let slice = |id, params| Slice {
        id,
        label: b"s".to_vec(),
        sched: b"PF".to_vec(),
        params,
    };
    let control = |m: &mut FlexricSlice, g: &mut Gnb, c: SliceControl| {
        m.control(
            &[0; 4],
            &sc::encode(&c),
            g,
            Instant::ZERO + Duration::from_millis(200),
        )
    };
    let add = SliceControl::AddMod {
        dl: SliceConf {
            sched_name: b"PF".to_vec(),
            slices: vec![slice(0, st(0, 4)), slice(5, st(5, 24))],
        },
        ul: SliceConf::default(),
    };
    assert!(matches!(
        control(&mut model, &mut gnb, add),
        ControlOutcome::Done { .. }
    ));
    let assoc = SliceControl::UeSliceAssoc(UeAssoc(vec![UeSlice {
        dl_id: 5,
        ul_id: 0,
        rnti: 2,
    }]));
    assert!(matches!(
        control(&mut model, &mut gnb, assoc),
        ControlOutcome::Done { .. }
    ));
    // Within a second: 5 and 20 PRBs per slot.
    let after = prb_split(&mut gnb, 200, 1200);
    assert!(
        (after.0 - 5.0).abs() < 0.5 && (after.1 - 20.0).abs() < 0.5,
        "{after:?}"
    );
    // The indication says so.
    let mut job = JobState::FlexricSlice;
    let (_, msg) = model.indicate(&mut job, &gnb, Instant::ZERO).remove(0);
    let ind: SliceIndication = sc::decode(&msg).unwrap();
    assert_eq!(
        ind.dl.slices.iter().map(|s| s.id).collect::<Vec<_>>(),
        [0, 5]
    );
    let ues: Vec<(u16, u32)> = ind.ues.0.iter().map(|u| (u.rnti, u.dl_id)).collect();
    assert_eq!(ues, [(1, 0), (2, 5)]);
    // A slice beyond the cell's 25 PRBs, or shares above 100 %, change nothing.
    let too_big = SliceControl::AddMod {
        dl: SliceConf {
            sched_name: b"PF".to_vec(),
            slices: vec![slice(7, st(20, 30))],
        },
        ul: SliceConf::default(),
    };
    assert!(matches!(
        control(&mut model, &mut gnb, too_big),
        ControlOutcome::Refused { .. }
    ));
    // DEL slice 5: UE 2 falls back to slice 0, which now holds both.
    let del = SliceControl::Del {
        dl: vec![5],
        ul: vec![],
    };
    assert!(matches!(
        control(&mut model, &mut gnb, del),
        ControlOutcome::Done { .. }
    ));
    let last = prb_split(&mut gnb, 1200, 1400);
    assert!((last.0 + last.1 - 5.0).abs() < 0.5, "{last:?}");
}
