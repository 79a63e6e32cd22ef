//! What the E2 node of a real-time run costs, measured on loopback
//! (docs/performance.md, "E2 node on the wall clock"):
//!
//! ```sh
//! cargo run --release -p tcran-emu --example e2_bench            # all
//! cargo run --release -p tcran-emu --example e2_bench -- 1000 5  # DRBs, seconds
//! cargo run --release -p tcran-emu --example e2_bench -- 1000 5 scale  # only 4.
//! ```
//!
//! A RIC in this process (blocking sockets, framed TCP on 127.0.0.1)
//! drives `tcran_emu::realtime::run_one`, the engine of `tcran run
//! --realtime --e2`, and measures:
//!
//! 1. **loopback baseline**: the round trip of a Control Request's bytes
//!    through an echo thread on the same loopback, same framing (what the
//!    kernel and two thread wake-ups cost, without E2);
//! 2. **control round trip**: RIC Control Request (FlexRIC TC shaper on /
//!    off, alternating) to its Acknowledge, at the RIC; minus the baseline
//!    is the node's part (I/O thread, loop wake-up, agent, apply, encode);
//! 3. **indication age**: a FlexRIC TC indication every 1 ms; its age at
//!    the RIC = arrival (µs since the Unix epoch) − the indication's own
//!    timestamp (taken when the agent's timer ran);
//! 4. **scale**: N UEs with one DRB each, E2SM-TCRAN reports of every DRB
//!    every 1 ms: report periods and indications per second received, and
//!    CPU per indication (process CPU with the subscription minus the same
//!    run's CPU without it, over equal windows, per indication; the RIC's
//!    own reading, on this thread, is measured apart and left out).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tcran_e2::e2ap::{self, Action, ActionType, E2apPdu, RicRequestId};
use tcran_e2::sm::e2sm_tcran;
use tcran_e2::sm::flexric_tc::{PlainControl, PlainIndication};
use tcran_e2::RicProfile;
use tcran_emu::e2::{E2Link, E2Options, E2Transport, TlsFiles};
use tcran_sim::{Sim, SimConfig};

fn write_frame(s: &mut TcpStream, pdu: &[u8]) {
    let mut f = (pdu.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(pdu);
    s.write_all(&f).unwrap();
}

fn read_frame(s: &mut impl Read) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let mut buf = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut buf).ok()?;
    Some(buf)
}

fn recv(s: &mut impl Read) -> E2apPdu {
    e2ap::decode(&read_frame(s).expect("node connected")).unwrap()
}

fn send(s: &mut TcpStream, p: &E2apPdu) {
    write_frame(s, &e2ap::encode(p).unwrap());
}

fn setup(s: &mut TcpStream) {
    let E2apPdu::E2SetupRequest(req) = recv(s) else {
        panic!("E2 Setup first")
    };
    send(
        s,
        &E2apPdu::E2SetupResponse(req.accept(e2ap::GlobalRicId {
            plmn: [0, 0xf1, 0x10],
            ric_id: 1,
        })),
    );
}

fn subscribe(s: &mut TcpStream, instance: u16, function: u16, trigger: Vec<u8>) {
    send(
        s,
        &E2apPdu::SubscriptionRequest(e2ap::SubscriptionRequest {
            request: RicRequestId {
                requestor: 1,
                instance,
            },
            function,
            event_trigger: trigger,
            actions: vec![Action {
                id: 0,
                kind: ActionType::Report,
                definition: None,
                subsequent: None,
            }],
        }),
    );
}

fn unsubscribe(s: &mut TcpStream, instance: u16, function: u16) {
    send(
        s,
        &E2apPdu::SubscriptionDeleteRequest(e2ap::SubscriptionDelete {
            request: RicRequestId {
                requestor: 1,
                instance,
            },
            function,
        }),
    );
}

fn control_pdu(instance: u16, on: bool) -> Vec<u8> {
    let c = PlainControl::ShpMod {
        id: 0,
        window_ms: 100,
        rate_kbps: 15000,
        active: on as u32,
    };
    e2ap::encode(&E2apPdu::ControlRequest(e2ap::ControlRequest {
        request: RicRequestId {
            requestor: 1,
            instance,
        },
        function: 146,
        call_process_id: None,
        header: vec![0; 4],
        message: c.encode(),
        ack_request: Some(true),
    }))
    .unwrap()
}

fn scenario(ues: u16, seconds: u64) -> SimConfig {
    let mut t = format!(
        "duration = \"{seconds}s\"\nseed = 1\n[cell]\nbandwidth_mhz = 20\n\
         [[flows]]\nname = \"voip\"\nue = 1\nkind = \"voip\"\n"
    );
    for r in 1..=ues {
        t.push_str(&format!(
            "[[ues]]\nrnti = {r}\nchannel = {{ kind = \"mcs\", mcs = 20 }}\n"
        ));
    }
    toml::from_str(&t).expect("scenario parses")
}

/// Starts a real-time run of `cfg` as an E2 node of a RIC on loopback;
/// returns the RIC's end of the association (after E2 Setup).
fn start(
    cfg: SimConfig,
    stop: Arc<AtomicBool>,
) -> (
    TcpStream,
    std::thread::JoinHandle<tcran_emu::realtime::Report>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let opts = E2Options {
        addr: listener.local_addr().unwrap().to_string(),
        transport: E2Transport::Tcp,
        tls: TlsFiles::default(),
        tc_drb: None,
        profile: RicProfile::Standard,
        verbose: false,
    };
    let run = std::thread::spawn(move || {
        let sim = Sim::new(&cfg, std::path::Path::new(".")).unwrap();
        let link = E2Link::new(&opts, &sim, 1).unwrap();
        tcran_emu::realtime::run_one(sim, "bench", cfg.duration, Some(link), &stop, true)
            .unwrap()
            .1
    });
    let (mut s, _) = listener.accept().unwrap();
    s.set_nodelay(true).unwrap();
    setup(&mut s);
    (s, run)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * p / 100.0) as usize).min(v.len() - 1)]
}

fn cpu_s() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_SELF).unwrap();
    let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
    t(u.user_time()) + t(u.system_time())
}

fn unix_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

const ROUNDS: usize = 2000;

fn baseline() -> f64 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let echo = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_nodelay(true).unwrap();
        while let Some(f) = read_frame(&mut s) {
            write_frame(&mut s, &f);
        }
    });
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let pdu = control_pdu(1, true);
    let mut rtt = Vec::new();
    for i in 0..ROUNDS + 100 {
        let t0 = Instant::now();
        write_frame(&mut s, &pdu);
        read_frame(&mut s).unwrap();
        if i >= 100 {
            rtt.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    drop(s);
    echo.join().unwrap();
    median(&mut rtt)
}

fn control_and_age() {
    let base = baseline();
    let stop = Arc::new(AtomicBool::new(false));
    let (mut s, run) = start(scenario(1, 60), stop.clone());
    // Control round trips (no subscription: only answers come back).
    let mut rtt = Vec::new();
    for i in 0..ROUNDS + 100 {
        let pdu = control_pdu(i as u16, i % 2 == 0);
        let t0 = Instant::now();
        write_frame(&mut s, &pdu);
        let answer = recv(&mut s);
        let dt = t0.elapsed().as_secs_f64() * 1e6;
        assert!(
            matches!(answer, E2apPdu::ControlAcknowledge(_)),
            "{answer:?}"
        );
        if i >= 100 {
            rtt.push(dt);
        }
    }
    // Indication age, FlexRIC TC every 1 ms.
    subscribe(&mut s, 1, 146, 1u32.to_le_bytes().to_vec());
    let mut age = Vec::new();
    while age.len() < ROUNDS + 100 {
        if let E2apPdu::Indication(ind) = recv(&mut s) {
            let now = unix_us();
            let i = PlainIndication::decode(&ind.message).unwrap();
            age.push((now - i.timestamp_us) as f64);
        }
    }
    let age = &mut age[100..];
    stop.store(true, Ordering::Relaxed);
    let report = run.join().unwrap();
    println!(
        "loopback framed echo round trip (baseline): median {base:.1} us\n\
         control round trip at the RIC: median {:.1} us, p99 {:.1} us ({ROUNDS} controls)\n\
         node's part (round trip - baseline): median {:.1} us\n\
         indication age at the RIC (FlexRIC TC, 1 ms): median {:.1} us, p99 {:.1} us\n\
         loop wake-up lateness: p50 {:.0} us, p99 {:.0} us",
        median(&mut rtt),
        pct(&mut rtt, 99.0),
        median(&mut rtt) - base,
        median(age),
        pct(age, 99.0),
        report.relay.lateness_us.p50,
        report.relay.lateness_us.p99,
    );
}

/// CPU seconds of the calling thread.
fn thread_cpu_s() -> f64 {
    use nix::time::{clock_gettime, ClockId};
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).unwrap();
    t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9
}

/// The header and message of a RIC Indication PDU, found by walking its
/// IEs (E2AP 9.1.1.7 as APER lays it out: `[0x00, 5, crit]`, the value's
/// length, `[ext, count]`, then id, criticality, open type length and
/// value per IE): a RIC that only counts reports need not decode 80 MB/s.
fn indication_parts(pdu: &[u8]) -> Option<(&[u8], &[u8])> {
    fn len(b: &[u8], at: &mut usize) -> Option<usize> {
        let first = *b.get(*at)?;
        if first & 0x80 == 0 {
            *at += 1;
            Some(usize::from(first))
        } else {
            let n = usize::from(u16::from_be_bytes([first & 0x3f, *b.get(*at + 1)?]));
            *at += 2;
            Some(n)
        }
    }
    if pdu.get(..2)? != [0x00, 5] {
        return None;
    }
    let mut at = 3;
    len(pdu, &mut at)?;
    let count = u16::from_be_bytes([*pdu.get(at + 1)?, *pdu.get(at + 2)?]);
    at += 3;
    let (mut header, mut message) = (None, None);
    for _ in 0..count {
        let id = u16::from_be_bytes([*pdu.get(at)?, *pdu.get(at + 1)?]);
        at += 3;
        let n = len(pdu, &mut at)?;
        let value = pdu.get(at..at + n)?;
        at += n;
        if id == 25 || id == 26 {
            let mut inner = 0;
            let m = len(value, &mut inner)?;
            let octets = value.get(inner..inner + m)?;
            if id == 25 {
                header = Some(octets);
            } else {
                message = Some(octets);
            }
        }
    }
    Some((header?, message?))
}

/// The node's CPU (every thread of the process but this one, the RIC's).
fn node_cpu_s() -> f64 {
    cpu_s() - thread_cpu_s()
}

/// What the RIC counted of a window of indications.
#[derive(Default)]
struct Counted {
    indications: u64,
    bytes: u64,
    /// DRB reports: the E2SM-TCRAN message's report count (its second
    /// and third octets: X.691 aligned, after the extension bit).
    reports: u64,
    /// Report periods: distinct indication headers (the node's time).
    periods: u64,
}

fn count(r: &mut impl Read, window: Duration) -> Counted {
    let mut c = Counted::default();
    let mut last_header = Vec::new();
    let t0 = Instant::now();
    while t0.elapsed() < window {
        let Some(f) = read_frame(r) else {
            continue;
        };
        c.bytes += f.len() as u64 + 4;
        if let Some((header, message)) = indication_parts(&f) {
            c.indications += 1;
            c.reports += u64::from(u16::from_be_bytes([message[1], message[2]]));
            if header != last_header {
                c.periods += 1;
                last_header = header.to_vec();
            }
        }
    }
    c
}

fn scale(drbs: u16, seconds: u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let (mut s, run) = start(scenario(drbs, seconds * 2 + 30), stop.clone());
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut r = std::io::BufReader::with_capacity(256 * 1024, s.try_clone().unwrap());
    // Without a subscription: the node's own CPU over `seconds`.
    let window = Duration::from_secs(seconds);
    let c0 = node_cpu_s();
    std::thread::sleep(window);
    let idle_cpu = node_cpu_s() - c0;
    // With E2SM-TCRAN reports of every DRB every 1 ms.
    let trig = e2sm_tcran::event_trigger(&e2sm_tcran::Trigger::Periodic { period_ms: 1 });
    subscribe(&mut s, 1, e2sm_tcran::DEFAULT_RAN_FUNCTION_ID, trig);
    let E2apPdu::SubscriptionResponse(_) = recv(&mut r) else {
        panic!("subscribed")
    };
    // The walk above agrees with the decoder.
    let f = read_frame(&mut r).unwrap();
    let Ok(E2apPdu::Indication(i)) = e2ap::decode(&f) else {
        panic!("an indication")
    };
    assert_eq!(indication_parts(&f), Some((&i.header[..], &i.message[..])));
    // Warm up, then count.
    count(&mut r, Duration::from_millis(500));
    let (c0, ric0) = (node_cpu_s(), thread_cpu_s());
    let t0 = Instant::now();
    let c = count(&mut r, window);
    let elapsed = t0.elapsed().as_secs_f64();
    let (busy_cpu, ric_cpu) = (node_cpu_s() - c0, thread_cpu_s() - ric0);
    unsubscribe(&mut s, 1, e2sm_tcran::DEFAULT_RAN_FUNCTION_ID);
    stop.store(true, Ordering::Relaxed);
    let report = run.join().unwrap();
    let e2 = report.e2.unwrap();
    // CPU per indication: the node's threads (loop, E2 I/O) with the
    // subscription minus without it, over equal windows; the RIC's
    // reading (this thread) is not in it.
    let extra = busy_cpu - idle_cpu * elapsed / seconds as f64;
    println!(
        "{drbs} DRBs, E2SM-TCRAN every 1 ms, {elapsed:.1} s: {:.0} report periods/s \
         ({:.0} DRB reports/s, {:.0} indications/s, {:.1} MB/s); periods skipped by the node: {} \
         (whole run); PDUs dropped: {}\n\
         node CPU: {:.2} s per s without the subscription, {:.2} s per s with it: \
         {:.1} us per indication, {:.3} us per DRB report, {:.0} us per report period \
         (the RIC's reading: {:.2} s per s)\n\
         loop wake-up lateness: p50 {:.0} us, p99 {:.0} us, max {:.0} us",
        c.periods as f64 / elapsed,
        c.reports as f64 / elapsed,
        c.indications as f64 / elapsed,
        c.bytes as f64 / elapsed / 1e6,
        e2.periods_skipped,
        e2.pdus_dropped,
        idle_cpu / seconds as f64,
        busy_cpu / elapsed,
        extra * 1e6 / c.indications.max(1) as f64,
        extra * 1e6 / c.reports.max(1) as f64,
        extra * 1e6 / c.periods.max(1) as f64,
        ric_cpu / elapsed,
        report.relay.lateness_us.p50,
        report.relay.lateness_us.p99,
        report.relay.lateness_us.max,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let drbs = args.first().map_or(1000, |a| a.parse().expect("DRBs"));
    let seconds = args.get(1).map_or(5, |a| a.parse().expect("seconds"));
    // `scale` as a third argument: only the N-DRB part (for profiling).
    if args.get(2).map(String::as_str) != Some("scale") {
        control_and_age();
    }
    scale(drbs, seconds);
}
