//! The E2 node of the C ABI, called as C calls it, against the xApp SDK's
//! E2 termination on loopback (its own port: bound to port 0): a C gNB's
//! instance is served, read and reconfigured by an xApp.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::ptr::null_mut;
use std::time::Duration;
use tcran::types::*;
use tcran::*;
use tcran_control::DrbKey;
use tcran_wire::{build_ipv4_udp, Ipv4Spec};
use tcran_xapp::blocking::Xapp;
use tcran_xapp::{ControlOutcome, XappConfig};

use tcran_status::*;

fn last_error() -> String {
    unsafe { CStr::from_ptr(tcran_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn start(config: &str) -> Result<*mut tcran_e2_t, (tcran_status, String)> {
    let mut e2 = null_mut();
    let s = unsafe {
        tcran_e2_start(
            config.as_ptr().cast(),
            config.len(),
            TCRAN_FORMAT_AUTO,
            &mut e2,
        )
    };
    if s == TCRAN_OK {
        Ok(e2)
    } else {
        assert!(e2.is_null());
        Err((s, last_error()))
    }
}

fn push(tc: *mut tcran_t, bytes: &[u8], tag: u64, now: u64) {
    let mut r = tcran_push_result {
        verdict: tcran_verdict::TCRAN_DROPPED,
        reason: tcran_drop_reason::TCRAN_DROP_NONE,
        queue: 0,
        malformed: 0,
    };
    let s = unsafe { tcran_push(tc, bytes.as_ptr(), bytes.len(), 0, tag, now, &mut r) };
    assert_eq!(s, TCRAN_OK, "{}", last_error());
    assert_eq!(r.verdict, tcran_verdict::TCRAN_ACCEPTED);
}

fn stats(tc: *mut tcran_t, now: u64) -> serde_json::Value {
    let mut buf = vec![0u8; 1 << 16];
    let mut needed = 0;
    let s = unsafe { tcran_stats_json(tc, now, buf.as_mut_ptr().cast(), buf.len(), &mut needed) };
    assert_eq!(s, TCRAN_OK, "{}", last_error());
    serde_json::from_slice(&buf[..needed - 1]).unwrap()
}

const FIFO: &str = r#"
queues = [ { id = 0, kind = "fifo" } ]
pacer = { kind = "none" }
"#;

const CURE: &str = r#"
scheduler = { kind = "round_robin" }
queues = [ { id = 0, kind = "codel" } ]
pacer = { kind = "jit", hold = false }
"#;

#[test]
fn bad_configs_are_refused_with_the_field_and_the_value() {
    let (s, m) = start("ric = \"nowhere\"").unwrap_err();
    assert_eq!(s, TCRAN_ERR_INVALID);
    assert!(
        m.contains("ric = \"nowhere\"") && m.contains("HOST:PORT"),
        "{m}"
    );
    let (s, m) = start("ric = \"127.0.0.1:1\"\ngnb_id = 4194304").unwrap_err();
    assert_eq!(s, TCRAN_ERR_INVALID);
    assert!(
        m.contains("gnb_id = 4194304") && m.contains("0..=4194303"),
        "{m}"
    );
    let (s, m) = start("ric = \"127.0.0.1:1\"\nretry_max = \"10ms\"").unwrap_err();
    assert_eq!(s, TCRAN_ERR_INVALID);
    assert!(
        m.contains("retry_max = 10ms") && m.contains("100ms..=1h"),
        "{m}"
    );
    let (s, m) = start("ric = \"127.0.0.1:1\"\nport = 3").unwrap_err();
    assert_eq!(s, TCRAN_ERR_PARSE);
    assert!(m.contains("port"), "{m}");
    let (s, m) = start("ric = \"127.0.0.1:1\"\nprofile = \"oran\"").unwrap_err();
    assert_eq!(s, TCRAN_ERR_PARSE);
    assert!(m.contains("oran"), "{m}");
    // NULL arguments.
    let s = unsafe { tcran_e2_start(c"x".as_ptr(), 1, TCRAN_FORMAT_AUTO, null_mut()) };
    assert_eq!(s, TCRAN_ERR_NULL);
    assert_eq!(
        unsafe { tcran_e2_add(null_mut(), null_mut(), 1, 1) },
        TCRAN_ERR_NULL
    );
    unsafe { tcran_e2_stop(null_mut()) };
}

#[test]
fn an_xapp_deploys_a_pipeline_into_the_c_gnb_over_e2() {
    let xapp = Xapp::start(XappConfig::tcp("127.0.0.1:0".parse().unwrap())).unwrap();
    let port = xapp.local_addrs()[0].port();

    // The gNB's instance, on its own clock (radio time from 0), with a
    // backlog in tcran and a report from below.
    let mut tc = null_mut();
    let s = unsafe {
        tcran_new(
            FIFO.as_ptr().cast(),
            FIFO.len(),
            TCRAN_FORMAT_AUTO,
            0x4601,
            1,
            std::ptr::null(),
            &mut tc,
        )
    };
    assert_eq!(s, TCRAN_OK, "{}", last_error());
    let ip = Ipv4Spec::new([10, 0, 0, 1].into(), [10, 45, 0, 2].into());
    let packet = build_ipv4_udp(&ip, 4000, 5001, &[0xab; 1000]).unwrap();
    let slot = 500_000u64;
    for i in 0..10 {
        push(tc, &packet, i, i * slot);
    }
    let report = tcran_rlc_report {
        tti_ns: slot,
        backlog_bytes: 20_000,
        backlog_sdus: 20,
        pulled_bytes: 10_000,
        granted_bytes: 10_000,
        mcs_known: true,
        mcs: 27,
        prbs: 106,
        ..Default::default()
    };
    assert_eq!(unsafe { tcran_on_report(tc, &report, 10 * slot) }, TCRAN_OK);

    let e2 = start(&format!("ric = \"127.0.0.1:{port}\"\ngnb_id = 7")).unwrap();
    assert_eq!(unsafe { tcran_e2_add(e2, tc, 0x4601, 1) }, TCRAN_OK);
    // A bearer that is no bearer.
    assert_eq!(unsafe { tcran_e2_add(e2, tc, 0, 1) }, TCRAN_ERR_INVALID);
    assert!(last_error().contains("rnti = 0x0000"), "{}", last_error());

    let node = xapp.wait_for_nodes(1, Duration::from_secs(20)).unwrap()[0].clone();
    assert_eq!(node.name, "gnb:00f110:7");
    let key = DrbKey::new(0x4601, 1);

    // The xApp reads the pipeline the gNB configured.
    // (As the pipeline holds it: the default queue filled in.)
    let fifo: tcran_tc::PipelineConfig = toml::from_str(FIFO).unwrap();
    let running = xapp.pipeline(node.id, key).unwrap();
    assert_eq!(
        (&running.queues, &running.pacer),
        (&fifo.queues, &fifo.pacer)
    );

    // ... and deploys the cure: applied at once, queued packets kept.
    let cure: tcran_tc::PipelineConfig = toml::from_str(CURE).unwrap();
    let cure_pacer = cure.pacer.clone();
    match xapp.deploy(node.id, key, cure.clone()).unwrap() {
        ControlOutcome::Applied(p) => {
            assert_eq!((&p.queues, &p.pacer), (&cure.queues, &cure.pacer))
        }
        ControlOutcome::Refused(why) => panic!("refused: {why}"),
    }
    let st = stats(tc, 10 * slot);
    assert_eq!(st["pipeline"]["pacer_kind"], "jit", "{st}");
    assert_eq!(st["pipeline"]["queues"][0]["kind"], "codel", "{st}");
    let mut totals = tcran_totals::default();
    assert_eq!(unsafe { tcran_get_totals(tc, &mut totals) }, TCRAN_OK);
    assert_eq!(totals.queued_packets, 10);

    // The control ran at the instance's time, not the agent's wall clock:
    // the gNB's next call, one slot later in radio time, is not "late".
    push(tc, &packet, 11, 11 * slot);
    assert_eq!(stats(tc, 11 * slot)["capi"]["time_clamped"], 0);

    // A deploy for a bearer the node does not serve is refused.
    let other = DrbKey::new(0x4601, 2);
    assert!(matches!(
        xapp.deploy(node.id, other, cure).unwrap(),
        ControlOutcome::Refused(_)
    ));

    // The node keeps the instance alive past the gNB's tcran_free.
    unsafe { tcran_free(tc) };
    let after = xapp.pipeline(node.id, key).unwrap();
    assert_eq!(after.pacer, cure_pacer);
    assert_eq!(unsafe { tcran_e2_remove(e2, 0x4601, 1) }, TCRAN_OK);
    assert_eq!(unsafe { tcran_e2_remove(e2, 0x4601, 1) }, TCRAN_EMPTY);
    unsafe { tcran_e2_stop(e2) };
}
