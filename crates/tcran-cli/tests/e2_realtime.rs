//! `tcran run --realtime --e2`: a scripted RIC, built on the xApp SDK's
//! E2 termination and framed TCP on loopback, drives the real `tcran`
//! binary.
//!
//! It sets the node up, subscribes to FlexRIC's TC model and to E2SM-KPM,
//! sends the four controls of FlexRIC's TC examples (a CoDel queue, an
//! OSI filter into it, the 5G-BDP pacer, a shaper), checks them in the
//! indications and in the run's summary, checks that a malformed control
//! and a refused one change nothing, then kills and restarts the RIC side:
//! the node sets up again, with its pipeline as it was, and the run loses
//! no packet (its drop counters stay at zero and its packet ledger
//! balances).
//!
//! The control messages are FlexRIC's own bytes (the hex strings of
//! FlexRIC's TC encoder, as documented in docs/e2.md, "FlexRIC TC"), not
//! tcran's encoder's output. The run lasts 8 s of wall clock.

// The multi-cell run: a module here rather than a test binary of its own
// (one link less in `make test`).
#[path = "e2_realtime/cells.rs"]
mod cells;

use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tcran_e2::e2ap::{self, Action, ActionType};
use tcran_e2::sm::flexric_tc::{PlainClassifier, PlainIndication};
use tcran_e2::sm::kpm;
use tcran_e2::transport::{self, Link};
use tcran_xapp::termination::{ControlAnswer, Event, SubscriptionAnswer, Termination};
use tokio::net::TcpListener;

const WAIT: Duration = Duration::from_secs(10);

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// FlexRIC's TC controls (type u32, action u32 = 0 ADD, 1 DEL, 2 MOD, body),
/// as FlexRIC's encoder writes them.
fn codel_queue_add() -> Vec<u8> {
    // QUEUE ADD CoDel, target 5 ms, interval 100 ms.
    hex("02000000 00000000 01000000 05000000 64000000")
}
fn osi_filter_to_queue_1() -> Vec<u8> {
    // CLS MOD OSI with one 48-byte filter: id 1, any source and
    // destination address, any source port, destination port 40000 (the
    // scenario's first flow), protocol 17 (UDP), l7 0, to queue 1.
    let mut m = hex("00000000 02000000 01000000");
    m.extend(1u32.to_le_bytes());
    m.extend([0; 4]);
    m.extend((-1i64).to_le_bytes());
    m.extend((-1i64).to_le_bytes());
    m.extend((-1i32).to_le_bytes());
    m.extend(40000i32.to_le_bytes());
    m.extend(17i32.to_le_bytes());
    m.extend(0u32.to_le_bytes());
    m.extend(1i32.to_le_bytes());
    m.extend([0; 4]);
    assert_eq!(m.len(), 60);
    m
}
fn bdp_pacer() -> Vec<u8> {
    // PCR MOD 5G-BDP, drb_sz 25000, timestamp 0.
    hex("05000000 02000000 01000000 a8610000 0000000000000000")
}
fn shaper_on_queue_1() -> Vec<u8> {
    // SHP MOD id 1, window 100 ms, 15000 kbit/s, active.
    hex("04000000 02000000 01000000 64000000 983a0000 01000000")
}

/// The RIC side of one association: the SDK's sans-IO E2 termination
/// (`tcran_xapp::termination`, the same code `tcran xapp` runs) over
/// tcran-e2's framed TCP link.
struct Ric {
    link: Link,
    term: Termination,
}

impl Ric {
    /// Sends what the termination has to send.
    async fn flush(&mut self) {
        while let Some(bytes) = self.term.poll_transmit() {
            self.link.tx.send(bytes).await.unwrap();
        }
    }
    /// The next event, reading the node as needed.
    async fn event(&mut self) -> Event {
        loop {
            if let Some(e) = self.term.poll_event() {
                assert!(!matches!(e, Event::Closed(_)), "association closed: {e:?}");
                return e;
            }
            let frame = tokio::time::timeout(WAIT, self.link.rx.recv())
                .await
                .expect("the node sends in time")
                .expect("association open")
                .expect("frame");
            self.term.handle(&frame);
            self.flush().await;
        }
    }
    /// The next indication.
    async fn indication(&mut self) -> e2ap::Indication {
        match self.event().await {
            Event::Indication(i) => i,
            other => panic!("only indications now: {other:?}"),
        }
    }
    /// The next event that is not an indication (indications keep flowing).
    async fn answer(&mut self) -> Event {
        loop {
            let e = self.event().await;
            if !matches!(e, Event::Indication(_)) {
                return e;
            }
        }
    }
    /// The next FlexRIC TC indication.
    async fn tc_indication(&mut self) -> PlainIndication {
        loop {
            if let Event::Indication(i) = self.event().await {
                if i.function == 146 {
                    return PlainIndication::decode(&i.message).unwrap();
                }
            }
        }
    }
    /// E2 Setup, answered by the termination: the node's RAN functions.
    async fn setup(&mut self) -> Vec<e2ap::RanFunction> {
        match self.event().await {
            Event::SetupDone { functions, .. } => functions,
            other => panic!("E2 Setup first: {other:?}"),
        }
    }
    async fn subscribe(&mut self, function: u16, trigger: Vec<u8>, definition: Option<Vec<u8>>) {
        let id = self
            .term
            .subscribe(
                function,
                trigger,
                vec![Action {
                    id: 0,
                    kind: ActionType::Report,
                    definition,
                    subsequent: None,
                }],
            )
            .unwrap();
        self.flush().await;
        match self.answer().await {
            Event::Subscription {
                request,
                answer: SubscriptionAnswer::Admitted { admitted, .. },
            } if request == id => assert_eq!(admitted, [0]),
            other => panic!("{other:?}"),
        }
    }
    /// A FlexRIC TC control (RAN function 146): the node's answer.
    async fn control(&mut self, message: Vec<u8>) -> ControlAnswer {
        let id = self.term.control(146, vec![0; 4], message).unwrap();
        self.flush().await;
        match self.answer().await {
            Event::Control { request, answer } if request == id => answer,
            other => panic!("{other:?}"),
        }
    }
}

async fn accept(listener: &TcpListener) -> Ric {
    let (s, _) = tokio::time::timeout(WAIT, listener.accept())
        .await
        .expect("the node connects")
        .unwrap();
    s.set_nodelay(true).unwrap();
    Ric {
        link: transport::link_of_stream(s),
        term: Termination::new(e2ap::GlobalRicId {
            plmn: [0x00, 0xf1, 0x10],
            ric_id: 1,
        }),
    }
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// `tcran run FIXTURE --realtime --e2 ADDR EXTRA.. --json --out OUT`, its
/// output piped.
fn run_realtime(fixture_name: &str, addr: SocketAddr, extra: &[&str], out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tcran"))
        .args(["run", &fixture(fixture_name), "--realtime", "--e2"])
        .arg(addr.to_string())
        .args(extra)
        .args(["--json", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcran-e2-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The KPM style 1 records of one indication, by measurement name.
fn kpm_records(message: &[u8]) -> Vec<tcran_e2::asn::e2sm_kpm::MeasurementRecordItem> {
    use asn1_codecs::aper::AperCodec;
    use tcran_e2::asn::e2sm_kpm as k;
    let m = k::E2SM_KPM_IndicationMessage::aper_decode(
        &mut asn1_codecs::PerCodecData::from_slice_aper(message),
    )
    .unwrap();
    let k::E2SM_KPM_IndicationMessageIndicationMessage_formats::IndicationMessage_Format1(f1) =
        m.indication_message_formats
    else {
        panic!("format 1")
    };
    f1.meas_data.0[0].meas_record.0.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ric_drives_a_realtime_run_over_e2() {
    use tcran_e2::asn::e2sm_kpm::MeasurementRecordItem as M;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let out = out_dir("run");
    let child = run_realtime("e2_realtime.toml", addr, &["--e2-tc-drb", "17921:1"], &out);

    let mut ric = accept(&listener).await;
    // The default profile offers FlexRIC's functions at E2 Setup and adds
    // E2SM-TCRAN when the RIC queries (tcran's termination does).
    let functions = ric.setup().await;
    assert_eq!(
        functions.iter().map(|f| f.id).collect::<Vec<_>>(),
        [2, 3, 142, 143, 144, 145, 146, 148, 246],
        "E2SM-KPM, E2SM-RC, FlexRIC MAC, RLC, PDCP, SLICE, TC, GTP and E2SM-TCRAN"
    );

    // TC every 5 ms, KPM style 1 every 10 ms.
    ric.subscribe(146, 5u32.to_le_bytes().to_vec(), None).await;
    ric.subscribe(
        2,
        kpm::event_trigger(10),
        Some(kpm::action_definition(1, &kpm::MEASUREMENTS, 10)),
    )
    .await;
    let (mut tc, mut kpm_seen) = (0, 0);
    while tc < 3 || kpm_seen < 2 {
        let i = ric.indication().await;
        match i.function {
            146 => {
                let ind = PlainIndication::decode(&i.message).unwrap();
                assert_eq!(ind.queues.len(), 1, "the scenario's single FIFO");
                assert_eq!(ind.queues[0].2.kind, 0, "FIFO");
                tc += 1;
            }
            2 => {
                let r = kpm_records(&i.message);
                assert_eq!(r.len(), kpm::MEASUREMENTS.len());
                // RRU.PrbAvailDl: a 5 MHz carrier at 15 kHz has 25 PRBs
                // (TS 38.101-1 Table 5.3.2-1), all available in every DL
                // slot of a 10 ms period.
                assert!(matches!(&r[5], M::Integer(v) if v.0 == 25), "{r:?}");
                kpm_seen += 1;
            }
            f => panic!("indication of function {f}"),
        }
    }

    // The four controls.
    for (what, c) in [
        ("CoDel queue", codel_queue_add()),
        ("OSI filter", osi_filter_to_queue_1()),
        ("5G-BDP pacer", bdp_pacer()),
        ("shaper", shaper_on_queue_1()),
    ] {
        let answer = ric.control(c).await;
        assert!(
            matches!(answer, ControlAnswer::Acknowledged { .. }),
            "{what}: {answer:?}"
        );
    }
    // They took effect: the pipeline the indications describe, and the
    // UDP stream now crossing the new queue.
    let (configured, steered) = loop {
        let ind = ric.tc_indication().await;
        assert_eq!(ind.queues.len(), 2, "{ind:?}");
        let (shaper, _, q1) = ind.queues[1];
        assert_eq!(q1.kind, 1, "queue 1 is CoDel");
        assert_eq!((shaper.active, shaper.max_rate_kbps), (1, 15000));
        assert_eq!(ind.pacer.kind, 1, "5G-BDP");
        let PlainClassifier::Osi(filters) = &ind.classifier else {
            panic!("OSI classifier: {ind:?}")
        };
        assert_eq!(filters.len(), 1);
        assert_eq!((filters[0].dst_port, filters[0].dst_queue), (40000, 1));
        if q1.packets_forwarded > 10 {
            break (ind, q1.packets_forwarded);
        }
    };

    // A malformed control and one the node refuses (a queue that does not
    // exist): RIC Control Failure, and nothing changes.
    let answer = ric.control(hex("07000000 09")).await;
    assert!(
        matches!(answer, ControlAnswer::Failed { .. }),
        "malformed: {answer:?}"
    );
    let answer = ric
        .control(hex("02000000 01000000 01000000 2a000000"))
        .await;
    assert!(
        matches!(answer, ControlAnswer::Failed { .. }),
        "QUEUE DEL 42: {answer:?}"
    );
    let after = ric.tc_indication().await;
    assert_eq!(after.classifier, configured.classifier);
    assert_eq!(after.pacer.kind, configured.pacer.kind);
    let shape = |i: &PlainIndication| {
        i.queues
            .iter()
            .map(|(s, _, q)| (q.kind, s.active, s.max_rate_kbps))
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(&after), shape(&configured));

    // The RIC dies and comes back on the same port: a new association, a
    // new E2 Setup, the pipeline as the RIC left it, traffic still in it.
    drop(ric);
    drop(listener);
    let listener = loop {
        match TcpListener::bind(addr).await {
            Ok(l) => break l,
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    let mut ric = accept(&listener).await;
    ric.setup().await;
    ric.subscribe(146, 5u32.to_le_bytes().to_vec(), None).await;
    let ind = ric.tc_indication().await;
    assert_eq!(ind.queues.len(), 2, "the CoDel queue survived the restart");
    assert_eq!(ind.classifier, configured.classifier);
    assert!(ind.queues[1].2.packets_forwarded > steered, "{ind:?}");

    // The run ends at its duration, with the usual outputs.
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let summary = json(&out.join("summary.json"));
    let v = &summary["variants"][0];
    assert_eq!(v["reconfigurations"]["applied"], 4, "{stderr}");
    assert_eq!(
        v["reconfigurations"]["failed"], 1,
        "QUEUE DEL 42 reached the node and was refused; the malformed one did not decode"
    );
    // No packet lost, across reconfigurations and the RIC's restart.
    assert_eq!(v["drops"], serde_json::json!({}), "{}", v["drops"]);
    assert_eq!(v["packets"]["unaccounted"], 0);
    assert_eq!(v["packets"]["dropped"], 0);
    for f in v["flows"].as_array().unwrap() {
        assert_eq!(f["lost_packets"], 0, "{f}");
        assert!(f["delivered_packets"].as_u64().unwrap() > 0, "{f}");
    }
    let reconf = std::fs::read_to_string(out.join("default/reconfigurations.csv")).unwrap();
    assert_eq!(
        reconf.lines().filter(|l| l.contains(",e2,")).count(),
        4,
        "{reconf}"
    );
    let rt = json(&out.join("realtime.json"));
    let e2 = &rt[0]["e2"];
    assert_eq!(e2["connections"], 2, "{e2}");
    assert_eq!(e2["setups_done"], 2, "{e2}");
    assert_eq!(e2["controls_applied"], 4, "{e2}");
    assert_eq!(e2["controls_refused"], 2, "{e2}");
    assert_eq!(e2["pdus_dropped"], 0, "{e2}");
    let _ = std::fs::remove_dir_all(&out);
}

fn tcran(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tcran"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn one_line_error(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

#[test]
fn sctp_is_refused_in_one_line() {
    let err = one_line_error(&tcran(&[
        "run",
        &fixture("e2_realtime.toml"),
        "--realtime",
        "--e2",
        "127.0.0.1:36421",
        "--e2-transport",
        "sctp",
    ]));
    assert!(err.contains("SCTP") && err.contains("framed TCP"), "{err}");
}

#[test]
fn e2_options_are_checked_before_running() {
    let f = fixture("e2_realtime.toml");
    let err = one_line_error(&tcran(&["run", &f, "--e2", "127.0.0.1:1"]));
    assert!(err.contains("--realtime"), "{err}");
    let err = one_line_error(&tcran(&[
        "run",
        &f,
        "--realtime",
        "--e2",
        "127.0.0.1:1",
        "--e2-tc-drb",
        "7:1",
    ]));
    assert!(
        err.contains("--e2-tc-drb 7:1") && err.contains("17921:1"),
        "{err}"
    );
    let err = one_line_error(&tcran(&[
        "run",
        &f,
        "--realtime",
        "--e2",
        "127.0.0.1:1",
        "--e2-tc-drb",
        "17921",
    ]));
    assert!(err.contains("RNTI:DRB"), "{err}");
    let err = one_line_error(&tcran(&["run", &f, "--realtime", "--e2", "nowhere"]));
    assert!(err.contains("--e2 nowhere"), "{err}");
}
