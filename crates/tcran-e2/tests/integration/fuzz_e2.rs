//! The fuzz targets' bodies (`tcran_e2::fuzzing`, used by fuzz/fuzz_targets/e2_*.rs)
//! on stable `cargo test`: the seed corpora of fuzz/seeds/e2_*, then random
//! truncations, bit flips and byte substitutions of them.

use proptest::prelude::*;
use std::path::PathBuf;
use tcran_e2::fuzzing;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let v: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(!v.is_empty(), "no seeds in {}", dir.display());
    v
}

type Body = fn(&[u8]);

const TARGETS: [(&str, Body); 8] = [
    ("e2_e2ap", fuzzing::e2ap_decode),
    ("e2_flexric_tc", fuzzing::flexric_tc),
    ("e2_flexric_stats", fuzzing::flexric_stats),
    ("e2_flexric_slice", fuzzing::flexric_slice),
    ("e2_kpm", fuzzing::kpm),
    ("e2_rc", fuzzing::rc),
    ("e2_tcran_sm", fuzzing::tcran_sm),
    ("e2_agent", fuzzing::agent),
];

#[test]
fn seed_corpora_run() {
    for (target, body) in TARGETS {
        for s in seeds(target) {
            body(&s);
        }
    }
}

/// The direct indication decoders take tcran's own seeds, so the
/// mutations above exercise their agreement with hampi (and FlexRIC's
/// captured RIC Indications, which asn1c encodes the same way).
#[test]
fn the_direct_decoders_take_the_indication_seeds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let read = |p: &str| std::fs::read(dir.join(p)).unwrap();
    let m = tcran_e2::sm::aper_fast::decode_statuses(&read("e2_tcran_sm/indication_message"), 0.0)
        .expect("tcran's indication message");
    assert_eq!(m.len(), 1);
    assert!(tcran_e2::sm::aper_fast::decode_indication_header(&read(
        "e2_tcran_sm/indication_header"
    ))
    .is_some());
    for name in [
        "tcran_RICindication",
        "flexric_05_RICindication",
        "flexric_08_RICindication",
    ] {
        let bytes = read(&format!("e2_e2ap/{name}"));
        let fast = tcran_e2::e2ap::decode_indication(&bytes).expect(name);
        assert_eq!(
            tcran_e2::e2ap::decode_generic(&bytes).unwrap(),
            tcran_e2::e2ap::E2apPdu::Indication(fast)
        );
    }
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
    fn mutated_seeds_keep_the_invariants(t in 0usize..TARGETS.len(), pick in any::<usize>(), ops in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 1..6)) {
        let (target, body) = TARGETS[t];
        let s = seeds(target);
        body(&mutate(&s[pick % s.len()], &ops));
    }

    #[test]
    fn random_bytes_keep_the_invariants(t in 0usize..TARGETS.len(), data in proptest::collection::vec(any::<u8>(), 0..200)) {
        (TARGETS[t].1)(&data);
    }
}

/// Writes the seeds of e2_kpm and e2_tcran_sm that tcran's own encoders
/// produce (and FlexRIC's KPM RAN function description):
/// `TCRAN_WRITE_SEEDS=1 cargo test -p tcran-e2 --test integration fuzz_e2:: -- --ignored`.
#[test]
#[ignore]
fn write_encoder_seeds() {
    use tcran_control::DrbKey;
    use tcran_e2::sm::{e2sm_tcran as m, kpm, ServiceModel};
    use tcran_tc::Change;
    if std::env::var("TCRAN_WRITE_SEEDS").is_err() {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let write = |dir: &str, name: &str, bytes: &[u8]| {
        std::fs::write(root.join(dir).join(name), bytes).unwrap()
    };
    // KPM.
    write("e2_kpm", "event_trigger_10ms", &kpm::event_trigger(10));
    write(
        "e2_kpm",
        "action_style1",
        &kpm::action_definition(1, &kpm::MEASUREMENTS, 10),
    );
    write(
        "e2_kpm",
        "action_style4",
        &kpm::action_definition(4, &["DRB.UEThpDl", "RRU.PrbUsedDl"], 100),
    );
    let mut setup = None;
    for line in include_str!("../data/flexric-golden-vectors.jsonl").lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["e2ap"] == "E2setupRequest" {
            let hex = v["aper_hex"].as_str().unwrap();
            setup = Some(
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect::<Vec<u8>>(),
            );
        }
    }
    let tcran_e2::e2ap::E2apPdu::E2SetupRequest(s) =
        tcran_e2::e2ap::decode(&setup.unwrap()).unwrap()
    else {
        panic!()
    };
    write(
        "e2_kpm",
        "flexric_ran_function_description",
        &s.functions.iter().find(|f| f.id == 2).unwrap().definition,
    );
    // A node with traffic, for indications of both models.
    let drb = DrbKey::new(0x4601, 1);
    let mut n = tcran_e2::fake::FakeNode::new();
    let cfg: tcran_tc::PipelineConfig = toml::from_str(
        "scheduler = { kind = \"priority\" }\npacer = { kind = \"bdp\" }\n[[queues]]\nid = 0\nkind = \"codel\"\n[[queues]]\nid = 1\nkind = \"fifo\"\npolicer = { kind = \"token_bucket\", rate = \"1Mbit/s\", burst = \"3000B\" }\nshaper = { kind = \"token_bucket\", rate = \"2Mbit/s\" }\n",
    )
    .unwrap();
    n.add_drb(drb, &cfg).unwrap();
    let t0 = tcran_core::Instant::ZERO;
    for i in 0..20 {
        n.push(drb, tcran_core::FiveTuple::default(), 1000 + i, t0);
    }
    n.transmit(drb, 5000, tcran_core::Duration::from_millis(3), t0);
    let action = |definition| tcran_e2::e2ap::Action {
        id: 0,
        kind: tcran_e2::e2ap::ActionType::Report,
        definition,
        subsequent: None,
    };
    for (style, name) in [(1, "indication_style1"), (4, "indication_style4")] {
        let mut job = kpm::Kpm::default()
            .subscribe(
                &kpm::event_trigger(1),
                &action(Some(kpm::action_definition(style, &kpm::MEASUREMENTS, 1))),
                &n,
            )
            .unwrap();
        let ms = |v| t0 + tcran_core::Duration::from_millis(v);
        assert!(kpm::Kpm::default()
            .indicate(&mut job.state, &n, ms(1))
            .is_empty());
        n.transmit(drb, 5000, tcran_core::Duration::from_millis(3), ms(2));
        let (h, msg) = kpm::Kpm::default()
            .indicate(&mut job.state, &n, ms(2))
            .remove(0);
        write("e2_kpm", &format!("{name}_header"), &h);
        write("e2_kpm", &format!("{name}_message"), &msg);
    }
    // E2SM-TCRAN.
    let model = m::TcRan::default();
    write(
        "e2_tcran_sm",
        "ran_function_definition",
        &model.ran_function(&n).definition,
    );
    let trig = m::event_trigger(&m::Trigger::Condition {
        check_period_ms: 5,
        metric: m::Metric::RlcSojournUs,
        threshold: 10_000,
        rising_edge_only: true,
    });
    write("e2_tcran_sm", "trigger_condition", &trig);
    write(
        "e2_tcran_sm",
        "trigger_periodic",
        &m::event_trigger(&m::Trigger::Periodic { period_ms: 1 }),
    );
    write(
        "e2_tcran_sm",
        "action_definition",
        &m::action_definition(&[drb]),
    );
    let mut job = model
        .subscribe(
            &m::event_trigger(&m::Trigger::Periodic { period_ms: 1 }),
            &action(None),
            &n,
        )
        .unwrap();
    let (h, msg) = model.indicate(&mut job.state, &n, t0).remove(0);
    write("e2_tcran_sm", "indication_header", &h);
    write("e2_tcran_sm", "indication_message", &msg);
    let ind = tcran_e2::e2ap::E2apPdu::Indication(tcran_e2::e2ap::Indication {
        request: tcran_e2::e2ap::RicRequestId {
            requestor: 7,
            instance: 1,
        },
        function: model.ran_function_id,
        action: 0,
        sn: Some(3),
        kind: tcran_e2::e2ap::IndicationType::Report,
        header: h.clone(),
        message: msg.clone(),
        call_process_id: None,
    });
    write(
        "e2_e2ap",
        "tcran_RICindication",
        &tcran_e2::e2ap::encode(&ind).unwrap(),
    );
    let (h, msg) = m::control(
        drb,
        &Change::Controls(vec![tcran_tc::Control::SetPacer {
            pacer: tcran_tc::pacer::PacerConfig::None,
        }]),
    );
    write("e2_tcran_sm", "control_header", &h);
    write("e2_tcran_sm", "control_message", &msg);
    let (_, msg) = m::control(drb, &Change::Deploy(cfg));
    write("e2_tcran_sm", "control_deploy", &msg);
}
