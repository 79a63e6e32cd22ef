//! The streaming E2SM-TCRAN report writer (`sm::report_stream`) writes,
//! for arbitrary pipeline statistics, exactly the bytes of hampi's encoder
//! over `drb_report_of`, splits reports over
//! messages within the limit, and the E2SM-TCRAN model's indications of a
//! node decode to every DRB's report.

use asn1_codecs::aper::AperCodec;
use asn1_codecs::PerCodecData;
use proptest::prelude::*;
use tcran_control::{DrbKey, LowerLayerKpis, RanNode};
use tcran_core::reason::{DropCounts, DropReason, MarkCounts, MarkReason};
use tcran_core::{Duration, FiveTuple, Instant, QueueId};
use tcran_e2::asn::e2sm_tcran as t;
use tcran_e2::e2ap::{Action, ActionType};
use tcran_e2::fake::FakeNode;
use tcran_e2::sm::report_stream::ReportStream;
use tcran_e2::sm::{e2sm_tcran as tcsm, ServiceModel, MAX_MESSAGE};
use tcran_tc::policer::PolicerStats;
use tcran_tc::stage::{AqmStats, LowerState, PacerStats, ShaperStats};
use tcran_tc::stats::{ClassifierStats, PipelineStats, QueueStats, Totals};

/// Counters of every size class (one to eight octets), zero included.
fn counter() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..256,
        any::<u64>(),
        (0u32..64).prop_map(|s| 1u64 << s),
        (1u32..64).prop_map(|s| (1u64 << s) - 1),
    ]
}

/// Rates and times as the stages report them: fractions, zero, negative,
/// huge and non-finite values (which the model maps to a Counter).
fn real() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        0.0f64..1e6,
        -1e3f64..0.0,
        0.0f64..1.9e19,
        Just(f64::NAN),
        Just(f64::INFINITY),
    ]
}

const KINDS: &[&str] = &[
    "fifo",
    "codel",
    "ecn_codel",
    "fq_codel",
    "pie",
    "red",
    "l4s",
];

fn queue() -> impl Strategy<Value = QueueStats> {
    (
        (
            0u16..=8191,
            proptest::sample::select(KINDS),
            proptest::collection::vec(counter(), 8),
        ),
        (
            proptest::collection::vec(prop_oneof![Just(0u64), counter()], DropReason::COUNT),
            proptest::collection::vec(prop_oneof![Just(0u64), counter()], MarkReason::COUNT),
        ),
        (real(), real()),
        (
            proptest::option::of((proptest::collection::vec(counter(), 6), real(), real())),
            proptest::option::of((counter(), real(), counter())),
        ),
        (
            proptest::option::of(prop_oneof![Just(-0.5), 0.0f64..=1.0, Just(2.0)]),
            proptest::option::of(any::<bool>()),
            proptest::option::of(any::<u32>()),
        ),
    )
        .prop_map(
            |((id, kind, c), (drops, marks), (avg, last), (pol, shp), (p, dropping, count))| {
                QueueStats {
                    id: QueueId(id),
                    kind,
                    backlog_packets: c[0] as usize,
                    backlog_bytes: c[1],
                    offered_packets: c[2],
                    offered_bytes: c[3],
                    forwarded_packets: c[4],
                    forwarded_bytes: c[5],
                    drops: DropCounts::from_slice(&drops),
                    marks: MarkCounts::from_slice(&marks),
                    redirected_out: c[6],
                    moved_in_packets: c[7],
                    avg_sojourn_ms: avg,
                    last_sojourn_ms: last,
                    policer: pol.map(|(c, measured, out)| PolicerStats {
                        rate_bps: c[0],
                        burst_bytes: c[1],
                        tokens_bytes: 0.0,
                        passed_packets: c[2],
                        passed_bytes: 0,
                        dropped_packets: c[3],
                        dropped_bytes: 0,
                        marked_packets: c[4],
                        marked_bytes: 0,
                        redirected_packets: c[5],
                        redirected_bytes: 0,
                        measured_bps: measured,
                        out_of_profile_bps: out,
                    }),
                    shaper: shp.map(|(rate, measured, delayed)| ShaperStats {
                        rate_bps: rate,
                        measured_bps: measured,
                        tokens_bytes: 0.0,
                        delayed,
                    }),
                    aqm: AqmStats {
                        probability: p,
                        dropping,
                        count,
                        average: None,
                    },
                }
            },
        )
}

trait FromSlice {
    fn from_slice(v: &[u64]) -> Self;
}
impl FromSlice for DropCounts {
    fn from_slice(v: &[u64]) -> Self {
        let mut c = DropCounts::default();
        c.0.copy_from_slice(v);
        c
    }
}
impl FromSlice for MarkCounts {
    fn from_slice(v: &[u64]) -> Self {
        let mut c = MarkCounts::default();
        c.0.copy_from_slice(v);
        c
    }
}

pub(crate) fn stats() -> impl Strategy<Value = PipelineStats> {
    (
        proptest::collection::vec(counter(), 12),
        proptest::collection::vec(queue(), 0..4),
        (
            proptest::sample::select(&["round_robin", "priority", "drr", "wfq", "strict"][..]),
            proptest::sample::select(&["none", "bdp", "e5g_bdp", "drql", "dyn_rlc"][..]),
        ),
        (real(), real(), proptest::option::of(real()), counter()),
    )
        .prop_map(
            |(c, queues, (sched, pacer), (bw, allow, limit, refused))| PipelineStats {
                time_s: 0.0,
                totals: Totals {
                    in_packets: c[0],
                    in_bytes: c[1],
                    out_packets: c[2],
                    out_bytes: c[3],
                    dropped_packets: c[4],
                    dropped_bytes: c[5],
                    queued_packets: c[6],
                    queued_bytes: c[7],
                },
                classifier: ClassifierStats {
                    classified: c[8],
                    defaulted: c[9],
                    missing_queue: c[10],
                    malformed: c[11],
                },
                queues,
                scheduler: sched.to_string(),
                pacer_kind: pacer.to_string(),
                pacer: PacerStats {
                    bandwidth_bps: bw,
                    allowance_bytes: allow,
                    limit,
                    refused,
                },
                lower: LowerState::default(),
            },
        )
}

pub(crate) fn lower() -> impl Strategy<Value = LowerLayerKpis> {
    (
        proptest::collection::vec(counter(), 5),
        any::<u32>(),
        0u64..u64::MAX / 2,
        any::<u8>(),
        proptest::option::of(-12500i16..=12500),
    )
        .prop_map(|(c, sdus, sojourn_ns, mcs, margin)| LowerLayerKpis {
            rlc_backlog_bytes: c[0],
            rlc_backlog_sdus: sdus,
            rlc_sojourn: Duration::from_nanos(sojourn_ns),
            rlc_tx_bytes: c[1],
            mac_tx_bytes: c[2],
            mac_prbs: c[3],
            mcs,
            handover_margin_cdb: margin,
        })
}

/// A DRB of either direction (an uplink one's `DrbRef` carries its
/// direction as an extension addition).
pub(crate) fn drb() -> impl Strategy<Value = DrbKey> {
    (
        any::<u16>(),
        prop_oneof![1u8..=32, Just(0u8), Just(40u8)],
        any::<bool>(),
    )
        .prop_map(|(r, d, up)| match up {
            false => DrbKey::new(r, d),
            true => DrbKey::uplink(r, d),
        })
}

/// Octets of one report encoded alone (hampi).
fn report_len(r: &t::DrbReport) -> usize {
    let mut d = PerCodecData::new_aper();
    r.aper_encode(&mut d).unwrap();
    d.into_bytes().len()
}

fn hampi(reports: Vec<t::DrbReport>) -> Vec<u8> {
    let msg = t::TcIndicationMessage {
        reports: t::TcIndicationMessageReports(reports),
    };
    let mut d = PerCodecData::new_aper();
    msg.aper_encode(&mut d).unwrap();
    d.into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// One message of up to 6 reports: the stream's bytes are hampi's, and
    /// it reports the length it wrote.
    #[test]
    fn streamed_reports_are_hampis_bytes(
        drbs in proptest::collection::vec((drb(), stats(), lower()), 0..6)
    ) {
        let mut s = ReportStream::new();
        s.start();
        for (d, st, l) in &drbs {
            prop_assert!(s.push(*d, st, l, usize::MAX));
        }
        let len = s.len();
        let streamed = s.finish().to_vec();
        prop_assert_eq!(streamed.len(), len);
        let reports: Vec<t::DrbReport> =
            drbs.iter().map(|(d, st, l)| tcsm::drb_report_of(*d, st, l)).collect();
        prop_assert_eq!(&streamed, &hampi(reports));
    }

    /// With a limit, reports go over several messages, each within the
    /// limit (unless a report alone exceeds it), each hampi's bytes, none
    /// lost or repeated.
    #[test]
    fn a_limit_splits_reports_over_messages(
        drbs in proptest::collection::vec((drb(), stats(), lower()), 1..12),
        limit in 40usize..2000,
    ) {
        let mut s = ReportStream::new();
        let mut messages = Vec::new();
        let mut groups = Vec::new();
        let mut group = Vec::new();
        s.start();
        for (i, (d, st, l)) in drbs.iter().enumerate() {
            if !s.push(*d, st, l, limit) {
                messages.push(s.finish().to_vec());
                groups.push(std::mem::take(&mut group));
                s.start();
                prop_assert!(s.push(*d, st, l, limit), "the first report always goes in");
            }
            group.push(i);
        }
        messages.push(s.finish().to_vec());
        groups.push(group);
        for (m, g) in messages.iter().zip(&groups) {
            prop_assert!(m.len() <= limit || g.len() == 1, "{} > {limit}", m.len());
            let reports: Vec<t::DrbReport> = g
                .iter()
                .map(|&i| tcsm::drb_report_of(drbs[i].0, &drbs[i].1, &drbs[i].2))
                .collect();
            prop_assert_eq!(m, &hampi(reports));
        }
        prop_assert_eq!(groups.concat(), (0..drbs.len()).collect::<Vec<_>>());
    }
}

/// The model's indications of a node with traffic carry every DRB once, in
/// order, each report equal to the one built from the node's statistics,
/// in messages of at most MAX_MESSAGE octets: fewer messages than a
/// split by sampled sizes would make.
#[test]
fn indications_of_a_thousand_drbs_carry_every_report() {
    let cfg: tcran_tc::PipelineConfig = toml::from_str(
        "scheduler = { kind = \"priority\" }\npacer = { kind = \"bdp\" }\n\
         [[queues]]\nid = 0\nkind = \"codel\"\n[[queues]]\nid = 1\nkind = \"fifo\"\npriority = 1\n",
    )
    .unwrap();
    let mut n = FakeNode::new();
    for i in 0..1000u16 {
        let d = DrbKey::new(0x4601 + i, 1 + (i % 3) as u8);
        n.add_drb(d, &cfg).unwrap();
        for k in 0..(i % 7) {
            n.push(
                d,
                FiveTuple::default(),
                100 + 50 * u32::from(k),
                Instant::ZERO,
            );
        }
        n.transmit(d, 300, Duration::from_millis(2), Instant::ZERO);
    }
    let model = tcsm::TcRan::default();
    let action = Action {
        id: 0,
        kind: ActionType::Report,
        definition: None,
        subsequent: None,
    };
    let trig = tcsm::event_trigger(&tcsm::Trigger::Periodic { period_ms: 1 });
    let mut job = model.subscribe(&trig, &action, &n).unwrap();
    let now = Instant::ZERO + Duration::from_millis(3);
    let inds = model.indicate(&mut job.state, &n, now);
    let mut keys = Vec::new();
    n.drbs(&mut keys);
    let mut got = Vec::new();
    let mut total = 0;
    for (h, m) in &inds {
        assert!(m.len() <= MAX_MESSAGE, "{}", m.len());
        total += m.len();
        let (_, msg) = tcsm::decode_indication(h, m).unwrap();
        got.extend(msg.reports.0);
    }
    let want: Vec<t::DrbReport> = keys
        .iter()
        .map(|d| {
            let (s, l) = n.tc_stats(*d, now).unwrap();
            tcsm::drb_report_of(*d, &s, &l)
        })
        .collect();
    assert_eq!(got.len(), 1000);
    assert!(got == want, "the decoded reports are the node's");
    // Greedy filling: every message but the last is more than full minus
    // one report.
    let largest = want.iter().map(report_len).max().unwrap();
    for (_, m) in &inds[..inds.len() - 1] {
        assert!(m.len() + largest + 3 > MAX_MESSAGE, "{} octets", m.len());
    }
    assert!(inds.len() >= total.div_ceil(MAX_MESSAGE));
}
