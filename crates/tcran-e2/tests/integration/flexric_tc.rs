//! FlexRIC's TC PLAIN messages: every indication and control payload of the
//! golden vectors decodes to the values FlexRIC printed for it
//! (`tc_*_decoded`), and encodes back byte for byte; the examples of
//! FLEXRIC-INTEROP.md decode as documented.

use crate::common;

use tcran_e2::sm::flexric_tc::*;

#[test]
fn indications_decode_to_flexrics_values_and_re_encode_exactly() {
    let mut seen = 0;
    for v in common::vectors() {
        let Some(hex) = v.json["tc_ind_hex"].as_str() else {
            continue;
        };
        let bytes = common::hex(hex);
        let ind =
            PlainIndication::decode(&bytes).unwrap_or_else(|e| panic!("line {}: {e}", v.line));
        assert_eq!(ind.encode(), bytes, "line {}", v.line);
        let d = &v.json["tc_ind_decoded"];
        let sch = d["sch"]["type"].as_str().unwrap();
        match &ind.scheduler {
            PlainScheduler::RoundRobin => assert_eq!(sch, "RR"),
            PlainScheduler::Priority(q) => {
                assert_eq!(sch, "PRIO");
                assert_eq!(q.len(), d["sch"]["q_prio"].as_array().unwrap().len());
            }
        }
        assert_eq!(ind.pacer.id as u64, d["pcr"]["id"].as_u64().unwrap());
        assert_eq!(
            ind.pacer.window_ms as u64,
            d["pcr"]["time_window_ms"].as_u64().unwrap()
        );
        assert_eq!(
            ind.pacer.bandwidth_kbps as f64,
            d["pcr"]["bnd_flt"].as_f64().unwrap()
        );
        if let PlainClassifier::Osi(f) = &ind.classifier {
            let jf = d["cls"]["filters"].as_array().unwrap();
            assert_eq!(f.len(), jf.len());
            for (a, b) in f.iter().zip(jf) {
                assert_eq!(a.id as u64, b["id"].as_u64().unwrap());
                assert_eq!(a.src_addr, b["src_addr"].as_i64().unwrap());
                assert_eq!(a.dst_port as i64, b["dst_port"].as_i64().unwrap());
                assert_eq!(a.protocol as i64, b["protocol"].as_i64().unwrap());
                assert_eq!(a.dst_queue as i64, b["dst_queue"].as_i64().unwrap());
            }
        }
        let jq = d["queues"].as_array().unwrap();
        assert_eq!(ind.queues.len(), jq.len(), "line {}", v.line);
        for ((s, p, q), j) in ind.queues.iter().zip(jq) {
            assert_eq!(s.id as u64, j["shp"]["id"].as_u64().unwrap());
            assert_eq!(
                s.window_ms as u64,
                j["shp"]["time_window_ms"].as_u64().unwrap()
            );
            assert_eq!(p.id as u64, j["plc"]["id"].as_u64().unwrap());
            assert_eq!(p.dropped as u64, j["plc"]["dropped_pkts"].as_u64().unwrap());
            assert_eq!(
                p.max_rate_kbps as f64,
                j["plc"]["max_rate_kbps"].as_f64().unwrap()
            );
            assert_eq!(p.dev_id as u64, j["plc"]["dev_id"].as_u64().unwrap());
            let kind = ["FIFO", "CODEL", "ECN_CODEL"][q.kind as usize];
            assert_eq!(kind, j["q"]["type"].as_str().unwrap());
            assert_eq!(q.bytes as u64, j["q"]["bytes"].as_u64().unwrap());
            assert_eq!(
                q.packets_forwarded as u64,
                j["q"]["pkts_fwd"].as_u64().unwrap()
            );
            assert_eq!(
                q.dropped_or_marked as u64,
                j["q"]["drop_or_mark"].as_u64().unwrap()
            );
            assert_eq!(
                q.avg_sojourn_ms as f64,
                j["q"]["avg_sojourn_time"].as_f64().unwrap()
            );
            assert_eq!(
                q.last_sojourn_us,
                j["q"]["last_sojourn_time"].as_i64().unwrap()
            );
        }
        assert_eq!(ind.timestamp_us, d["tstamp"].as_i64().unwrap());
        seen += 1;
    }
    assert_eq!(seen, 8);
}

#[test]
fn controls_decode_to_flexrics_values_and_re_encode_exactly() {
    let mut seen = 0;
    for v in common::vectors() {
        let Some(hex) = v.json["tc_ctrl_hex"].as_str() else {
            continue;
        };
        let bytes = common::hex(hex);
        let c = PlainControl::decode(&bytes).unwrap_or_else(|e| panic!("line {}: {e}", v.line));
        let d = &v.json["tc_ctrl_decoded"];
        let act = d["act"].as_str().unwrap();
        match (&c, d["type"].as_str().unwrap()) {
            (
                PlainControl::PcrMod {
                    kind,
                    drb_sz,
                    timestamp_us,
                },
                "PCR",
            ) => {
                assert_eq!((*kind, act), (1, "MOD"));
                assert_eq!(*drb_sz as u64, d["drb_sz"].as_u64().unwrap());
                assert_eq!(*timestamp_us, d["tstamp"].as_i64().unwrap());
            }
            (
                PlainControl::QueueAdd {
                    kind,
                    target_ms,
                    interval_ms,
                },
                "QUEUE",
            ) => {
                assert_eq!((*kind, act), (1, "ADD"));
                assert_eq!((*target_ms, *interval_ms), (5, 100));
            }
            (PlainControl::QueueDel { id, kind }, "QUEUE") => {
                assert_eq!((*id, *kind, act), (1, 1, "DEL"));
            }
            (
                PlainControl::ShpMod {
                    id,
                    window_ms,
                    rate_kbps,
                    active,
                },
                "SHP",
            ) => {
                assert_eq!((*id, *window_ms, *rate_kbps, *active), (1, 100, 15000, 1));
            }
            (PlainControl::ShpAdd, "SHP") => assert_eq!(act, "ADD"),
            (
                PlainControl::PlcMod {
                    id,
                    drop_rate_kbps,
                    dev_id,
                    dev_rate_kbps,
                    active,
                },
                "PLC",
            ) => {
                assert_eq!(
                    (*id, *drop_rate_kbps, *dev_id, *dev_rate_kbps, *active),
                    (1, 1000, 0, 2000, 1)
                );
            }
            (PlainControl::SchPriority(q), "SCH") => assert_eq!(q, &[1, 0]),
            (PlainControl::ClsOsiDel { id }, "CLS") => {
                assert_eq!(*id as u64, d["filter_id"].as_u64().unwrap())
            }
            (other, ty) => panic!("line {}: {ty} decoded as {other:?}", v.line),
        }
        assert_eq!(c.encode(), bytes, "line {}", v.line);
        seen += 1;
    }
    assert_eq!(seen, 8);
}

fn hex(s: &str) -> Vec<u8> {
    common::hex(&s.replace(' ', ""))
}

#[test]
fn the_documented_examples_decode() {
    // FLEXRIC-INTEROP.md step 3.
    assert_eq!(
        PlainControl::decode(&hex("02000000 00000000 00000000 00000000")).unwrap(),
        PlainControl::QueueAdd {
            kind: 0,
            target_ms: 0,
            interval_ms: 0
        }
    );
    let filter = "07000000 00000000 0a00000100000000 ffffffffffffffff 39300000 ffffffff 11000000";
    let l7 = "00000000";
    let tail = "01000000 00000000";
    let f = PlainFilter {
        id: 7,
        src_addr: 0x0100_000a,
        dst_addr: -1,
        src_port: 12345,
        dst_port: -1,
        protocol: 17,
        dst_queue: 1,
    };
    // 48-byte filter (60-byte message), 40-byte filter (52 bytes), and the
    // 48-byte one with FlexRIC's 4 uninitialised trailing bytes.
    let m48 = hex(&format!("00000000 02000000 01000000 {filter} {l7} {tail}"));
    let m40 = hex(&format!("00000000 02000000 01000000 {filter} 01000000"));
    let add = hex(&format!(
        "00000000 00000000 01000000 {filter} {l7} {tail} deadbeef"
    ));
    assert_eq!(m48.len(), 60);
    assert_eq!(m40.len(), 52);
    for (m, modify) in [(&m48, true), (&m40, true), (&add, false)] {
        assert_eq!(
            PlainControl::decode(m).unwrap(),
            PlainControl::ClsOsiFilter { modify, filter: f }
        );
    }
    assert_eq!(Ipv4(f.src_addr), "10.0.0.1");
}

#[allow(non_snake_case)]
fn Ipv4(v: i64) -> String {
    std::net::Ipv4Addr::from((v as u32).to_le_bytes()).to_string()
}

#[test]
fn the_smallest_realistic_indication_is_132_bytes() {
    let q = (
        PlainShaper {
            id: 0,
            active: 0,
            max_rate_kbps: 0,
            measured_kbps: 0.0,
            window_ms: 0,
        },
        PlainPolicer {
            id: 0,
            measured_kbps: 0.0,
            window_ms: 0,
            dropped: 0,
            marked: 0,
            max_rate_kbps: 0.0,
            active: 0,
            dst_id: 0,
            dev_id: 0,
        },
        PlainQueue {
            kind: 0,
            bytes: 0,
            packets: 0,
            bytes_forwarded: 0,
            packets_forwarded: 0,
            dropped_or_marked: 0,
            avg_sojourn_ms: 0.0,
            last_sojourn_us: 0,
        },
    );
    let ind = PlainIndication {
        scheduler: PlainScheduler::RoundRobin,
        pacer: PlainPacer {
            kind: 0,
            id: 0,
            bandwidth_kbps: 0.0,
            window_ms: 0,
        },
        classifier: PlainClassifier::Osi(vec![]),
        queues: vec![q],
        timestamp_us: 0,
    };
    assert_eq!(ind.encode().len(), 132);
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    for v in common::vectors() {
        for key in ["tc_ind_hex", "tc_ctrl_hex"] {
            let Some(h) = v.json[key].as_str() else {
                continue;
            };
            let b = common::hex(h);
            for cut in 0..b.len() {
                let _ = PlainIndication::decode(&b[..cut]);
                let _ = PlainControl::decode(&b[..cut]);
            }
        }
    }
    // A huge count is refused before allocating.
    let mut b = vec![0u8; 4 + 16];
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(PlainIndication::decode(&b).is_err());
}
