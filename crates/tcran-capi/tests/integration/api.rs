//! The C API called as C calls it (raw pointers, status codes), with
//! packets built by tcran-wire and plug-ins written as `extern "C"`
//! functions here.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};
use tcran::plugin::abi::*;
use tcran::types::*;
use tcran::*;
use tcran_core::{Ecn, Qfi};
use tcran_wire::{build_ipv4_udp, with_sdap, Ipv4Spec, SdapDlHeader};

use tcran_status::*;

fn udp(sport: u16, payload: usize, ecn: Ecn) -> Vec<u8> {
    let mut ip = Ipv4Spec::new([10, 0, 0, 1].into(), [10, 45, 0, 2].into());
    ip.ecn = ecn;
    build_ipv4_udp(&ip, sport, 5001, &vec![0xab; payload]).unwrap()
}

fn last_error() -> String {
    unsafe { CStr::from_ptr(tcran_last_error()) }
        .to_string_lossy()
        .into_owned()
}

#[derive(Debug)]
struct Tc(*mut tcran_t);
impl Drop for Tc {
    fn drop(&mut self) {
        unsafe { tcran_free(self.0) }
    }
}

fn new_with(config: &str, plugins: *const tcran_plugins_t) -> Result<Tc, (tcran_status, String)> {
    let mut tc = null_mut();
    let s = unsafe {
        tcran_new(
            config.as_ptr().cast(),
            config.len(),
            TCRAN_FORMAT_AUTO,
            0x4601,
            1,
            plugins,
            &mut tc,
        )
    };
    if s == TCRAN_OK {
        Ok(Tc(tc))
    } else {
        assert!(tc.is_null());
        Err((s, last_error()))
    }
}

fn new(config: &str) -> Tc {
    new_with(config, null()).unwrap()
}

const FIFO: &str = "[[queues]]\nid = 0\nkind = \"fifo\"";

fn push(tc: &Tc, bytes: &[u8], flags: u32, tag: u64, now: u64) -> tcran_push_result {
    let mut r = tcran_push_result {
        verdict: tcran_verdict::TCRAN_DROPPED,
        reason: tcran_drop_reason::TCRAN_DROP_NONE,
        queue: 9,
        malformed: 9,
    };
    let s = unsafe { tcran_push(tc.0, bytes.as_ptr(), bytes.len(), flags, tag, now, &mut r) };
    assert_eq!(s, TCRAN_OK, "{}", last_error());
    r
}

fn pull(tc: &Tc, now: u64) -> Option<(Vec<u8>, tcran_packet_out)> {
    let mut buf = vec![0u8; TCRAN_MAX_PACKET as usize];
    let mut out = tcran_packet_out::default();
    match unsafe { tcran_pull(tc.0, now, buf.as_mut_ptr(), buf.len(), &mut out) } {
        TCRAN_OK => {
            buf.truncate(out.len as usize);
            Some((buf, out))
        }
        TCRAN_EMPTY => None,
        s => panic!("{s:?}: {}", last_error()),
    }
}

fn totals(tc: &Tc) -> tcran_totals {
    let mut t = tcran_totals::default();
    assert_eq!(unsafe { tcran_get_totals(tc.0, &mut t) }, TCRAN_OK);
    t
}

fn stats(tc: &Tc, now: u64) -> serde_json::Value {
    let mut needed = 0;
    let s = unsafe { tcran_stats_json(tc.0, now, null_mut(), 0, &mut needed) };
    assert_eq!(s, TCRAN_ERR_BUFFER_TOO_SMALL);
    let mut buf = vec![0u8; needed];
    let s = unsafe { tcran_stats_json(tc.0, now, buf.as_mut_ptr().cast(), needed, &mut needed) };
    assert_eq!(s, TCRAN_OK);
    let text = CStr::from_bytes_with_nul(&buf).unwrap().to_str().unwrap();
    serde_json::from_str(text).unwrap()
}

#[test]
fn packets_come_out_byte_for_byte_with_their_tag_and_sdap_header() {
    let tc = new(FIFO);
    let plain = udp(1000, 100, Ecn::NotEct);
    let sdap = with_sdap(
        SdapDlHeader {
            rdi: false,
            rqi: true,
            qfi: Qfi(9),
        },
        &udp(1001, 50, Ecn::Ect0),
    );
    let r = push(&tc, &plain, 0, 11, 1_000);
    assert_eq!(
        (r.verdict, r.reason, r.queue, r.malformed),
        (
            tcran_verdict::TCRAN_ACCEPTED,
            tcran_drop_reason::TCRAN_DROP_NONE,
            0,
            0
        )
    );
    push(&tc, &sdap, TCRAN_PUSH_SDAP, 12, 2_000);
    let (b1, m1) = pull(&tc, 5_000).unwrap();
    let (b2, m2) = pull(&tc, 5_000).unwrap();
    assert_eq!((b1, m1.tag, m1.sojourn_ns, m1.ecn), (plain, 11, 4_000, 0));
    assert_eq!((b2, m2.tag, m2.sojourn_ns, m2.ecn), (sdap, 12, 3_000, 2));
    assert!(pull(&tc, 5_000).is_none());
    let t = totals(&tc);
    assert_eq!((t.in_packets, t.out_packets, t.queued_packets), (2, 2, 0));
}

#[test]
fn garbage_is_carried_in_the_default_queue_and_counted() {
    let tc = new(FIFO);
    let mut truncated = udp(1000, 100, Ecn::NotEct);
    truncated.truncate(30);
    for (bytes, flags) in [
        (&truncated[..], 0),
        (&[0x99u8; 7][..], 0),
        (&[0x45u8][..], 0),
        (&[0x01u8][..], TCRAN_PUSH_SDAP),
    ] {
        let r = push(&tc, bytes, flags, 1, 0);
        assert_eq!((r.verdict, r.malformed), (tcran_verdict::TCRAN_ACCEPTED, 1));
        let (out, meta) = pull(&tc, 0).unwrap();
        assert_eq!((&out[..], meta.malformed), (bytes, 1));
    }
    let s = stats(&tc, 0);
    assert_eq!(s["pipeline"]["classifier"]["malformed"], 4);
    assert_eq!(s["capi"]["malformed"], 4);
}

#[test]
fn bad_arguments_are_errors_with_a_message() {
    let tc = new(FIFO);
    let p = udp(1, 10, Ecn::NotEct);
    let mut r = std::mem::MaybeUninit::<tcran_push_result>::uninit();
    unsafe {
        assert_eq!(
            tcran_push(null_mut(), p.as_ptr(), p.len(), 0, 0, 0, r.as_mut_ptr()),
            TCRAN_ERR_NULL
        );
        assert_eq!(last_error(), "tc is NULL");
        assert_eq!(
            tcran_push(tc.0, null(), 5, 0, 0, 0, null_mut()),
            TCRAN_ERR_NULL
        );
        assert_eq!(
            tcran_push(tc.0, p.as_ptr(), 0, 0, 0, 0, null_mut()),
            TCRAN_ERR_INVALID
        );
        assert_eq!(
            tcran_push(tc.0, p.as_ptr(), 9001, 0, 0, 0, null_mut()),
            TCRAN_ERR_INVALID
        );
        assert_eq!(
            tcran_push(tc.0, p.as_ptr(), p.len(), 2, 0, 0, null_mut()),
            TCRAN_ERR_INVALID
        );
        assert!(last_error().contains("flags = 0x2"), "{}", last_error());
        let bad = tcran_rlc_report::default();
        assert_eq!(tcran_on_report(tc.0, &bad, 0), TCRAN_ERR_INVALID);
        assert!(last_error().starts_with("report.tti_ns = 0"));
        assert_eq!(tcran_on_report(tc.0, null(), 0), TCRAN_ERR_NULL);
        let text = "op = \"set_pacer\"\npacer = { kind = \"bdp\", offset = 7.0 }";
        assert_eq!(
            tcran_control(tc.0, text.as_ptr().cast(), text.len(), 0, 0),
            TCRAN_ERR_CONFIG
        );
        assert!(
            last_error().starts_with("control: pacer.offset = 7"),
            "{}",
            last_error()
        );
        let text = "{\"op\": \"set_pacer\", \"pacer\": {\"kind\": \"bdp\", \"ofset\": 1}}";
        assert_eq!(
            tcran_control(tc.0, text.as_ptr().cast(), text.len(), 0, 0),
            TCRAN_ERR_PARSE
        );
        assert!(last_error().contains("ofset"), "{}", last_error());
        assert_eq!(
            tcran_control(tc.0, text.as_ptr().cast(), text.len(), 3, 0),
            TCRAN_ERR_INVALID
        );
        let mut at = 0;
        assert_eq!(tcran_next_wakeup(tc.0, 0, &mut at), TCRAN_EMPTY);
        assert_eq!(at, TCRAN_NO_WAKEUP);
        assert_eq!(tcran_next_wakeup(tc.0, 0, null_mut()), TCRAN_ERR_NULL);
        assert_eq!(
            tcran_pull_each(tc.0, 0, 0, None, null_mut(), null_mut()),
            TCRAN_ERR_NULL
        );
        tcran_free(null_mut());
        tcran_plugins_free(null_mut());
    }
    for (config, status, start) in [
        (
            "[[queues]]\nid = 0\nkind = \"codel\"\ntarget = \"0ms\"",
            TCRAN_ERR_CONFIG,
            "config: queues[0].codel.target = 0ms: must be in 1us..=10s",
        ),
        ("queues = [", TCRAN_ERR_PARSE, "config: "),
        ("{\"queues\": []}", TCRAN_ERR_CONFIG, "config: queues = []"),
        ("\u{ff}", TCRAN_ERR_PARSE, "config: "),
    ] {
        let (s, m) = new_with(config, null()).unwrap_err();
        assert_eq!(s, status, "{m}");
        assert!(m.starts_with(start), "{m}");
        assert!(!m.contains('\n'), "{m}");
    }
    let mut tc2 = null_mut();
    let s = unsafe { tcran_new(FIFO.as_ptr().cast(), FIFO.len(), 0, 0, 1, null(), &mut tc2) };
    assert_eq!(s, TCRAN_ERR_INVALID);
    assert!(
        last_error().starts_with("rnti = 0x0000"),
        "{}",
        last_error()
    );
    let s = unsafe { tcran_new(FIFO.as_ptr().cast(), FIFO.len(), 0, 1, 33, null(), &mut tc2) };
    assert_eq!(s, TCRAN_ERR_INVALID);
    let s = unsafe { tcran_new(null(), 4, 0, 1, 1, null(), &mut tc2) };
    assert_eq!(s, TCRAN_ERR_NULL);
}

#[test]
fn a_too_small_buffer_keeps_the_packet_first_in_line() {
    let tc = new(FIFO);
    push(&tc, &udp(1, 100, Ecn::NotEct), 0, 1, 0);
    push(&tc, &udp(2, 10, Ecn::NotEct), 0, 2, 0);
    let mut small = [0u8; 64];
    let mut out = tcran_packet_out::default();
    let s = unsafe { tcran_pull(tc.0, 0, small.as_mut_ptr(), small.len(), &mut out) };
    assert_eq!((s, out.len), (TCRAN_ERR_BUFFER_TOO_SMALL, 128));
    assert_eq!(totals(&tc).queued_packets, 2);
    let mut at = 0;
    assert_eq!(unsafe { tcran_next_wakeup(tc.0, 5, &mut at) }, TCRAN_OK);
    assert_eq!(at, 5);
    assert_eq!(pull(&tc, 0).unwrap().1.tag, 1);
    assert_eq!(pull(&tc, 0).unwrap().1.tag, 2);
}

/// The report carries the cell's slot clock to the pacer as it does in the
/// simulator: DDDSU, D pulls offering 5000 B and the S pull 2000 B, four
/// reports per pattern; jit's target for each pull is its own phase's
/// (thesis-free check of `next_pull_in_ns` and `pulls_per_pattern`). A
/// next pull more than 1 s away is refused.
#[test]
fn the_report_carries_the_tdd_pattern_to_the_pacer() {
    let tc = new(&format!("pacer = {{ kind = \"jit\" }}\n{FIFO}"));
    let grant = |pull: u64| if pull % 4 == 3 { 2000 } else { 5000 };
    let mut t = 0u64;
    for pull in 0..40u64 {
        let gap = if pull % 4 == 3 { 1_000_000 } else { 500_000 };
        let r = tcran_rlc_report {
            tti_ns: 500_000,
            pulled_bytes: grant(pull),
            granted_bytes: grant(pull),
            max_bytes: grant(pull),
            next_pull_in_ns: gap,
            pulls_per_pattern: 4,
            ..Default::default()
        };
        assert_eq!(unsafe { tcran_on_report(tc.0, &r, t) }, TCRAN_OK);
        if pull >= 4 {
            let limit = stats(&tc, t)["pipeline"]["pacer"]["limit"].as_f64();
            assert_eq!(limit, Some(grant(pull + 1) as f64), "pull {pull}");
        }
        t += gap;
    }
    let far = tcran_rlc_report {
        tti_ns: 500_000,
        next_pull_in_ns: 2_000_000_000,
        ..Default::default()
    };
    assert_eq!(unsafe { tcran_on_report(tc.0, &far, t) }, TCRAN_ERR_INVALID);
}

#[test]
fn time_never_goes_backwards() {
    let tc = new(FIFO);
    push(&tc, &udp(1, 10, Ecn::NotEct), 0, 1, 10_000);
    let (_, m) = pull(&tc, 4_000).unwrap();
    assert_eq!(m.sojourn_ns, 0);
    // The pull and the two calls of `stats` came "before" 10 us.
    assert_eq!(stats(&tc, 4_000)["capi"]["time_clamped"], 3);
}

#[test]
fn a_policer_mark_is_reported_at_ingress_and_drops_reach_the_callback() {
    let tc = new(
        "[[queues]]\nid = 0\nkind = \"fifo\"\nlimit_packets = 2\npolicer = { kind = \"token_bucket\", rate = \"8kbit/s\", burst = \"200B\", action = \"mark\" }",
    );
    unsafe extern "C" fn on_drop(ctx: *mut c_void, tag: u64, len: u32, reason: tcran_drop_reason) {
        unsafe { &mut *ctx.cast::<Vec<(u64, u32, tcran_drop_reason)>>() }.push((tag, len, reason));
    }
    let mut drops: Vec<(u64, u32, tcran_drop_reason)> = Vec::new();
    let ctx = (&mut drops as *mut Vec<_>).cast();
    assert_eq!(
        unsafe { tcran_set_drop_callback(tc.0, Some(on_drop), ctx) },
        TCRAN_OK
    );
    let small = udp(1, 10, Ecn::Ect0);
    assert_eq!(
        push(&tc, &small, 0, 1, 0).verdict,
        tcran_verdict::TCRAN_ACCEPTED
    );
    let big = udp(1, 500, Ecn::Ect0);
    assert_eq!(
        push(&tc, &big, 0, 2, 0).verdict,
        tcran_verdict::TCRAN_MARKED
    );
    let r = push(&tc, &big, 0, 3, 0);
    assert_eq!(
        (r.verdict, r.reason),
        (
            tcran_verdict::TCRAN_DROPPED,
            tcran_drop_reason::TCRAN_DROP_QUEUE_FULL
        )
    );
    assert_eq!(drops, [(3, 528, tcran_drop_reason::TCRAN_DROP_QUEUE_FULL)]);
    let (bytes, meta) = pull(&tc, 0).map(|_| pull(&tc, 0).unwrap()).unwrap();
    assert_eq!(meta.ecn, 3);
    assert_eq!(tcran_wire::parse(&bytes, false).unwrap().ecn, Ecn::Ce);
    assert!(tcran_wire::ipv4_header_checksum_ok(&bytes));
    let c = unsafe { CStr::from_ptr(tcran_drop_reason_str(1)) };
    assert_eq!(c.to_str().unwrap(), "queue_full");
    drop(tc);
}

#[test]
fn callbacks_may_not_call_their_own_instance_but_may_call_others() {
    let tc = new(FIFO);
    let other = new(FIFO);
    for i in 0..3 {
        push(&tc, &udp(1, 10, Ecn::NotEct), 0, i, 0);
    }
    struct Ctx {
        me: *mut tcran_t,
        other: *mut tcran_t,
        statuses: Vec<(tcran_status, tcran_status)>,
    }
    unsafe extern "C" fn egress(
        ctx: *mut c_void,
        data: *const u8,
        len: usize,
        _: *const tcran_packet_out,
    ) -> i32 {
        let c = unsafe { &mut *ctx.cast::<Ctx>() };
        let own = unsafe { tcran_push(c.me, data, len, 0, 0, 0, null_mut()) };
        let other = unsafe { tcran_push(c.other, data, len, 0, 0, 0, null_mut()) };
        c.statuses.push((own, other));
        (c.statuses.len() == 2) as i32
    }
    let mut c = Ctx {
        me: tc.0,
        other: other.0,
        statuses: Vec::new(),
    };
    let mut sent = 0;
    let s = unsafe {
        tcran_pull_each(
            tc.0,
            0,
            0,
            Some(egress),
            (&mut c as *mut Ctx).cast(),
            &mut sent,
        )
    };
    assert_eq!((s, sent), (TCRAN_OK, 2), "stops after the callback says so");
    assert_eq!(c.statuses, [(TCRAN_ERR_REENTRANT, TCRAN_OK); 2]);
    assert_eq!(
        (totals(&tc).queued_packets, totals(&other).queued_packets),
        (1, 2)
    );
}

#[test]
fn ingress_and_egress_on_two_threads_conserve_every_packet() {
    let tc = new("pacer = { kind = \"static\", limit_bytes = \"3000B\" }\n[[queues]]\nid = 0\nkind = \"codel\"");
    let addr = tc.0 as usize;
    const N: u64 = 20_000;
    let ingress = std::thread::spawn(move || {
        let p = udp(7, 1000, Ecn::NotEct);
        for i in 0..N {
            let s = unsafe {
                tcran_push(
                    addr as *mut tcran_t,
                    p.as_ptr(),
                    p.len(),
                    0,
                    i,
                    i * 1_000,
                    null_mut(),
                )
            };
            assert_eq!(s, TCRAN_OK);
        }
    });
    let mut out = 0;
    let mut last_tag = None;
    let mut t = 0;
    while !ingress.is_finished() || totals(&tc).queued_packets > 0 {
        t += 1_000;
        while let Some((_, m)) = pull(&tc, t) {
            assert!(last_tag < Some(m.tag), "FIFO order");
            last_tag = Some(m.tag);
            out += 1;
        }
        let r = tcran_rlc_report {
            tti_ns: 1_000_000,
            pulled_bytes: 3000,
            granted_bytes: 3000,
            ..Default::default()
        };
        assert_eq!(unsafe { tcran_on_report(tc.0, &r, t) }, TCRAN_OK);
    }
    ingress.join().unwrap();
    let tot = totals(&tc);
    assert_eq!(tot.in_packets, N);
    assert_eq!(tot.out_packets, out);
    assert_eq!(
        tot.in_packets,
        tot.out_packets + tot.dropped_packets + tot.queued_packets
    );
}

// ------------------------------------------------------------------ plug-ins

/// A misbehaving plug-in of every stage: each answer is out of range.
unsafe extern "C" fn bad_classify(_: *mut c_void, _: *const tcran_packet_info) -> i32 {
    -5
}
unsafe extern "C" fn bad_enqueue(
    _: *mut c_void,
    _: *const tcran_packet_info,
    _: *const tcran_backlog,
    _: u64,
) -> u32 {
    77
}
unsafe extern "C" fn bad_select(_: *mut c_void, _: u64, _: *const tcran_sched_view) -> i32 {
    9999
}
unsafe extern "C" fn bad_admits(_: *mut c_void, _: u32, _: u64, _: u64, _: u32) -> u32 {
    7
}
unsafe extern "C" fn bad_wakeup(_: *mut c_void, now: u64) -> u64 {
    now
}

fn header(stage: u32, name: &'static CStr) -> tcran_plugin_header {
    tcran_plugin_header {
        abi_version: TCRAN_PLUGIN_ABI_VERSION,
        stage,
        name: name.as_ptr(),
        create: None,
        destroy: None,
    }
}

fn registry() -> *mut tcran_plugins_t {
    let mut p = null_mut();
    assert_eq!(unsafe { tcran_plugins_new(&mut p) }, TCRAN_OK);
    let classifier = tcran_classifier_ops {
        header: header(TCRAN_STAGE_CLASSIFIER, c"bad-cls"),
        classify: Some(bad_classify),
    };
    let queue = tcran_queue_ops {
        header: header(TCRAN_STAGE_QUEUE, c"bad-q"),
        enqueue: Some(bad_enqueue),
        dequeue: None,
        probability: None,
    };
    let scheduler = tcran_scheduler_ops {
        header: header(TCRAN_STAGE_SCHEDULER, c"bad-sched"),
        queue_added: None,
        queue_removed: None,
        backlogged: None,
        select: Some(bad_select),
        sent: None,
        empty: None,
    };
    let pacer = tcran_pacer_ops {
        header: header(TCRAN_STAGE_PACER, c"bad-pacer"),
        admits: Some(bad_admits),
        forwarded: None,
        report: None,
        sdu_departed: None,
        status_pdu: None,
        next_wakeup: Some(bad_wakeup),
        stats: None,
    };
    unsafe {
        assert_eq!(
            tcran_plugins_register(p, c"cls".as_ptr(), &classifier.header),
            TCRAN_OK
        );
        assert_eq!(
            tcran_plugins_register(p, c"q".as_ptr(), &queue.header),
            TCRAN_OK
        );
        assert_eq!(
            tcran_plugins_register(p, c"sched".as_ptr(), &scheduler.header),
            TCRAN_OK
        );
        assert_eq!(
            tcran_plugins_register(p, c"pacer".as_ptr(), &pacer.header),
            TCRAN_OK
        );
    }
    // The tables were copied: these locals may go.
    p
}

#[test]
fn bad_plugin_answers_are_counted_and_replaced_by_safe_ones() {
    let plugins = registry();
    let config = r#"
        classifier = { kind = "plugin", symbol = "cls" }
        scheduler = { kind = "plugin", symbol = "sched" }
        pacer = { kind = "plugin", symbol = "pacer" }
        [[queues]]
        id = 0
        kind = "plugin"
        symbol = "q"
        [[queues]]
        id = 1
        kind = "fifo"
    "#;
    let tc = new_with(config, plugins).unwrap();
    unsafe { tcran_plugins_free(plugins) };
    for i in 0..5 {
        let r = push(&tc, &udp(1, 10, Ecn::NotEct), 0, i, 0);
        assert_eq!((r.verdict, r.queue), (tcran_verdict::TCRAN_ACCEPTED, 0));
    }
    for i in 0..5 {
        assert_eq!(pull(&tc, 0).unwrap().1.tag, i);
    }
    let mut at = 0;
    assert_eq!(unsafe { tcran_next_wakeup(tc.0, 0, &mut at) }, TCRAN_EMPTY);
    let s = stats(&tc, 0);
    assert_eq!(
        s["plugin_errors"],
        serde_json::json!({"classifier": 5, "queue": 5, "scheduler": 5, "pacer": 6})
    );
    assert_eq!(s["pipeline"]["pacer_kind"], "plugin");
}

#[test]
fn plugin_tables_are_checked_before_use() {
    let plugins = registry();
    let mut wrong_abi = header(TCRAN_STAGE_PACER, c"old");
    wrong_abi.abi_version = 1;
    let s = unsafe { tcran_plugins_register(plugins, c"old".as_ptr(), &wrong_abi) };
    assert_eq!(s, TCRAN_ERR_CONFIG);
    assert!(
        last_error().contains("abi_version is 0x1"),
        "{}",
        last_error()
    );
    let no_select = tcran_scheduler_ops {
        header: header(TCRAN_STAGE_SCHEDULER, c"x"),
        queue_added: None,
        queue_removed: None,
        backlogged: None,
        select: None,
        sent: None,
        empty: None,
    };
    let s = unsafe { tcran_plugins_register(plugins, c"x".as_ptr(), &no_select.header) };
    assert_eq!(s, TCRAN_ERR_CONFIG);
    assert!(
        last_error().contains("`select` is NULL"),
        "{}",
        last_error()
    );

    let (s, m) = new_with(
        &format!("pacer = {{ kind = \"plugin\", symbol = \"sched\" }}\n{FIFO}"),
        plugins,
    )
    .unwrap_err();
    assert_eq!(s, TCRAN_ERR_CONFIG);
    assert_eq!(
        m,
        "config: pacer.symbol = sched: is a scheduler plug-in, not a pacer"
    );
    let (_, m) = new_with(
        &format!("pacer = {{ kind = \"plugin\", symbol = \"nope\" }}\n{FIFO}"),
        plugins,
    )
    .unwrap_err();
    assert!(m.contains("registered: cls, pacer, q, sched"), "{m}");
    let (_, m) = new_with(
        &format!("pacer = {{ kind = \"plugin\", path = \"/nonexistent/libp.so\", symbol = \"p\" }}\n{FIFO}"),
        plugins,
    )
    .unwrap_err();
    assert!(
        m.starts_with("config: pacer.path = /nonexistent/libp.so: cannot be loaded"),
        "{m}"
    );
    // A plug-in deployed by a live control, then replaced by a built-in.
    let tc = new_with(FIFO, plugins).unwrap();
    let c = r#"{"op": "set_pacer", "pacer": {"kind": "plugin", "symbol": "pacer"}}"#;
    assert_eq!(
        unsafe { tcran_control(tc.0, c.as_ptr().cast(), c.len(), 0, 0) },
        TCRAN_OK
    );
    assert_eq!(stats(&tc, 0)["pipeline"]["pacer_kind"], "plugin");
    let c = "op = \"set_pacer\"\npacer = { kind = \"bdp\" }";
    assert_eq!(
        unsafe { tcran_control(tc.0, c.as_ptr().cast(), c.len(), 0, 0) },
        TCRAN_OK
    );
    unsafe { tcran_plugins_free(plugins) };
}

unsafe extern "C" fn refuse(
    _: *const c_char,
    _: usize,
    err: *mut c_char,
    cap: usize,
) -> *mut c_void {
    let msg = c"target must be a duration";
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr(), err, msg.to_bytes_with_nul().len().min(cap))
    };
    null_mut()
}

#[test]
fn a_plugin_refusing_its_params_is_a_config_error_with_its_reason() {
    let plugins = registry();
    let mut h = header(TCRAN_STAGE_CLASSIFIER, c"picky");
    h.create = Some(refuse);
    let ops = tcran_classifier_ops {
        header: h,
        classify: Some(bad_classify),
    };
    assert_eq!(
        unsafe { tcran_plugins_register(plugins, c"picky".as_ptr(), &ops.header) },
        TCRAN_OK
    );
    let (s, m) = new_with(
        &format!("classifier = {{ kind = \"plugin\", symbol = \"picky\", params = \"target=x\" }}\n{FIFO}"),
        plugins,
    )
    .unwrap_err();
    assert_eq!(s, TCRAN_ERR_CONFIG);
    assert_eq!(m, "config: classifier.params = target=x: plug-in picky refused them: target must be a duration");
    unsafe { tcran_plugins_free(plugins) };
}

/// What docs/c-api.md and tcran.h say of the BDP pacers: before the first
/// `tcran_on_report`, `bdp` lets nothing go and `e5g_bdp` one packet (to
/// start its estimate), however long the caller pulls; once the MAC
/// reported grants, packets go.
#[test]
fn the_bdp_pacers_wait_for_the_first_report() {
    const MS: u64 = 1_000_000;
    for (pacer, most_before) in [("bdp", 0), ("e5g_bdp", 1)] {
        let tc = new(&format!("pacer = {{ kind = \"{pacer}\" }}\n{FIFO}"));
        for k in 0..50 {
            push(&tc, &udp(4000, 1200, Ecn::NotEct), 0, k, 0);
        }
        let mut before = 0;
        for t in 0..=10 {
            while pull(&tc, t * MS).is_some() {
                before += 1;
            }
        }
        assert!(
            before <= most_before,
            "{pacer}: {before} packets before any report"
        );
        let r = tcran_rlc_report {
            tti_ns: MS,
            pulled_bytes: 20_000,
            granted_bytes: 20_000,
            max_bytes: 20_000,
            ..Default::default()
        };
        let mut after = 0;
        for t in 11..=20 {
            assert_eq!(unsafe { tcran_on_report(tc.0, &r, t * MS) }, TCRAN_OK);
            while pull(&tc, t * MS + MS / 2).is_some() {
                after += 1;
            }
        }
        assert!(
            after > 0,
            "{pacer}: nothing after ten reports of a 20 kB grant"
        );
    }
}
