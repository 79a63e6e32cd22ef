//! `tcran emulate` with real programs: the kernel's TCP, iperf3 and ping in
//! network namespaces, through the RAN node in real time.
//!
//! These tests need root, /dev/net/tun and iperf3/ping
//! (`scripts/ensure-emu-tools.sh`), and they run in real time, so they are
//! `#[ignore]`d in the ordinary test run and run one at a time by `make
//! emu-test` (part of `make test`), never beside CPU-heavy tests.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn tcran() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tcran"))
}

fn scenario() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/emulate-25prb.toml")
        .display()
        .to_string()
}

/// A fresh output directory.
fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcran-emu-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    let out = tcran().args(args).stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "tcran {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// The flows of the run's only variant.
fn flows(s: &Value) -> &Vec<Value> {
    s["variants"][0]["flows"].as_array().unwrap()
}

/// The flow whose name starts with `prefix` and carried the most bytes.
fn flow<'a>(s: &'a Value, prefix: &str) -> &'a Value {
    flows(s)
        .iter()
        .filter(|f| f["name"].as_str().unwrap().starts_with(prefix))
        .max_by_key(|f| f["delivered_packets"].as_u64().unwrap())
        .unwrap_or_else(|| panic!("no {prefix} flow in {s}"))
}

/// Namespaces and devices of emulator `pid`, as `ip` lists them.
fn leftovers(pid: u32) -> Vec<String> {
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let ns = String::from_utf8_lossy(&ns.stdout);
    let mut found: Vec<String> = ns
        .lines()
        .filter(|l| l.starts_with(&format!("tcran-{pid}-")))
        .map(str::to_string)
        .collect();
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    found.extend(
        String::from_utf8_lossy(&links.stdout)
            .lines()
            .filter(|l| l.contains(&format!("tce{pid}")))
            .map(str::to_string),
    );
    found
}

/// Emulates the 25-PRB cell's vanilla variant into `dir` with the UE
/// running the shell command `ue`.
fn emulate_vanilla(dir: &Path, ue: &str) -> Output {
    run(&[
        "emulate",
        &scenario(),
        "--variant",
        "vanilla",
        "--out",
        dir.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        ue,
    ])
}

/// With no load the emulator adds nothing to the modelled delays: a ping
/// through the cell has the RTT the simulator computes for its modelled
/// ping on the same cell (within 1 ms: the real pings arrive at any phase
/// of the 1-ms slot, the modelled ones at a slot boundary).
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn no_load_ping_rtt_matches_the_simulator() {
    let sim = out_dir("ping-sim");
    run(&[
        "run",
        &scenario(),
        "--out",
        sim.to_str().unwrap(),
        "--set",
        "variants=[{ name = \"vanilla\" }]",
        "--set",
        "flows=[{ name = \"ping\", ue = 1, kind = \"ping\", interval = \"200ms\" }]",
        "--set",
        "warmup=0s",
        "--set",
        "duration=5s",
    ]);
    let modelled = flow(&summary(&sim), "ping")["rtt_ms"]["mean"]
        .as_f64()
        .unwrap();
    let emu = out_dir("ping-emu");
    let pings = emu.join("ping.txt");
    emulate_vanilla(
        &emu,
        &format!("ping -n -c 25 -i 0.2 198.51.100.1 > {}", pings.display()),
    );
    // What ping itself saw: "rtt min/avg/max/mdev = a/b/c/d ms".
    let text = std::fs::read_to_string(&pings).unwrap();
    let avg: f64 = text
        .lines()
        .find(|l| l.contains("min/avg/max"))
        .and_then(|l| l.split('=').nth(1))
        .and_then(|v| v.trim().split('/').nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no ping summary in {text}"));
    let measured = flow(&summary(&emu), "ping")["rtt_ms"]["mean"]
        .as_f64()
        .unwrap();
    assert!(
        (avg - modelled).abs() <= 1.0,
        "ping's own RTT {avg:.2} ms vs simulated {modelled:.2} ms"
    );
    assert!(
        (measured - modelled).abs() <= 1.0,
        "emulator-measured RTT {measured:.2} ms vs simulated {modelled:.2} ms"
    );
}

/// A pause of the UE's programs is a quiet second the emulator attributes
/// to the hosts (nothing to carry), not to the relay or the cell, and the
/// table says so.
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn a_pause_of_the_programs_is_a_quiet_second_of_the_hosts() {
    let emu = out_dir("quiet");
    let out = emulate_vanilla(
        &emu,
        "ping -n -q -c 5 -i 0.2 198.51.100.1; sleep 2.5; ping -n -q -c 5 -i 0.2 198.51.100.1",
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(emu.join("emulation.json")).unwrap())
            .unwrap();
    let quiet = &report["relay"]["quiet"];
    let count = quiet["count"].as_u64().unwrap();
    assert!((1..=3).contains(&count), "{quiet}");
    for q in quiet["first"].as_array().unwrap() {
        assert_eq!(q["cause"], "hosts", "{quiet}");
    }
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("no packet moved in either direction (hosts: "),
        "{table}"
    );
}

/// One bulk download with the kernel's CUBIC (iperf3 -C cubic: this
/// kernel defaults to BBR) and a ping sharing the DRB, from the UE.
fn download(variant: &str, dir: &Path, extra: &[&str]) -> Value {
    let scn = scenario();
    let mut args = vec![
        "emulate",
        scn.as_str(),
        "--variant",
        variant,
        "--out",
        dir.to_str().unwrap(),
        "--warmup",
        "4s",
        "--server",
        "iperf3 -s -1",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--",
        "sh",
        "-c",
        "sleep 0.3; ping -n -q -i 0.2 -c 70 198.51.100.1 >/dev/null & \
         iperf3 -c 198.51.100.1 -R -C cubic -t 14 >/dev/null; wait",
    ]);
    run(&args);
    summary(dir)
}

/// Vanilla bloats the RLC buffer: the ping waits behind the download for
/// hundreds of milliseconds. FQ-CoDel + 5G-BDP keeps it short and the
/// link (nearly) as busy.
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn vanilla_bloats_and_fq_codel_with_5g_bdp_cures_it() {
    let v = download("vanilla", &out_dir("vanilla"), &[]);
    let c = download("fq_codel+5g-bdp", &out_dir("cured"), &[]);
    let rtt = |s: &Value| flow(s, "ping")["rtt_ms"]["mean"].as_f64().unwrap();
    let thr = |s: &Value| flow(s, "tcp")["throughput_mbps"].as_f64().unwrap();
    assert!(rtt(&v) > 200.0, "vanilla ping RTT {:.1} ms", rtt(&v));
    assert!(rtt(&c) < 30.0, "cured ping RTT {:.1} ms", rtt(&c));
    assert!(
        thr(&c) >= 0.9 * thr(&v),
        "cured {:.2} Mbit/s vs vanilla {:.2}",
        thr(&c),
        thr(&v)
    );
}

/// CE marks on real bytes reach the receiving kernel: with ECN on
/// (net.ipv4.tcp_ecn=1 in the namespaces) and CoDel marking instead of
/// dropping, the UE's TCP echoes the marks (ECE on its ACKs, RFC 3168
/// sec. 6.1.3), seen in the UE-side capture.
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn ce_marks_reach_the_receiving_kernel() {
    let dir = out_dir("ecn");
    let s = download(
        "ecn-codel+5g-bdp",
        &dir,
        &["--sysctl", "net.ipv4.tcp_ecn=1", "--pcap"],
    );
    let marks = &s["variants"][0]["marks"]["tc"];
    assert!(
        marks.as_object().is_some_and(|m| !m.is_empty()),
        "no CE marks in the summary: {}",
        s["variants"][0]
    );
    let (ce_down, ece_up) = ecn_in_capture(&dir.join("ue1.pcapng"));
    assert!(ce_down > 0, "no CE-marked packet reached the UE");
    assert!(ece_up > 0, "the UE's TCP never echoed a mark (ECE)");
}

/// (CE-marked packets written to the UE, TCP segments from the UE with
/// ECE set) in a capture.
fn ecn_in_capture(path: &Path) -> (u64, u64) {
    use pcap_file::pcapng::{Block, PcapNgReader};
    let file = std::fs::File::open(path).unwrap();
    let mut reader = PcapNgReader::new(file).unwrap();
    let (mut ce, mut ece) = (0, 0);
    while let Some(block) = reader.next_block() {
        let Ok(Block::EnhancedPacket(p)) = block else {
            continue;
        };
        let inbound = p.options.iter().any(|o| {
            matches!(
                o,
                pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption::Flags(f)
                    if f & 0b11 == 0b01
            )
        });
        let pkt = tcran_wire::packet_from_bytes(
            tcran_core::PacketId(0),
            p.data.to_vec().into_boxed_slice(),
            false,
            tcran_core::Instant::ZERO,
        );
        if inbound && pkt.ecn == tcran_core::Ecn::Ce {
            ce += 1;
        }
        if let tcran_core::packet::L4Meta::Tcp(t) = pkt.l4 {
            if !inbound && t.flags.has(tcran_core::packet::TcpFlags::ECE) {
                ece += 1;
            }
        }
    }
    (ce, ece)
}

/// Nothing is left behind: not after a run, not after a run killed with
/// SIGKILL (the next start finds its namespaces by their dead process id
/// and removes them with their processes), not after SIGTERM.
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn nothing_is_left_behind() {
    // A normal run with a server command that never ends by itself.
    let dir = out_dir("clean");
    // A command line no other process on the machine has: this test's own
    // server, found by it alone (other work may run `sleep 60` beside it).
    let server = format!("sleep 60.{}", std::process::id());
    let child = spawn_vanilla(&dir, &["--server", &server, "--", "sleep", "0.5"]);
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(leftovers(pid), Vec::<String>::new());
    assert!(!processes_named(&server));

    // SIGTERM ends a run cleanly; the UE command's status is the exit code.
    let mut child = spawn_vanilla(&dir, &["--", "sleep", "30"]);
    let pid = child.id();
    wait_for(|| !leftovers(pid).is_empty());
    nix_kill(pid, "TERM");
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(128 + 15),
        "exit code of the killed UE command"
    );
    assert_eq!(leftovers(pid), Vec::<String>::new());

    // SIGKILL leaves everything; the next run removes it.
    let ue_command = format!("77.{}", std::process::id());
    let mut killed = spawn_vanilla(&dir, &["--", "sleep", &ue_command]);
    let pid = killed.id();
    wait_for(|| leftovers(pid).len() >= 2);
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(
        !leftovers(pid).is_empty(),
        "a killed run leaves its namespaces"
    );
    emulate_vanilla(&dir, "true");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("emulation.json")).unwrap())
            .unwrap();
    let removed = report["leftovers_removed"].as_array().unwrap();
    assert!(
        removed
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(&format!("tcran-{pid}-"))),
        "leftovers of {pid} not reported: {removed:?}"
    );
    assert_eq!(leftovers(pid), Vec::<String>::new());
    assert!(
        !processes_named(&format!("sleep {ue_command}")),
        "the killed run's UE command survived"
    );
}

/// Without root the emulator refuses to start, with one line and exit 2.
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn refuses_to_run_without_root() {
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_tcran"),
            "emulate",
            &scenario(),
            "--variant",
            "vanilla",
            "--out",
            "/tmp",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("needs root"), "{err}");
}

/// `tcran emulate` of the vanilla variant into `dir`, in the background.
fn spawn_vanilla(dir: &Path, args: &[&str]) -> std::process::Child {
    tcran()
        .args(["emulate", &scenario(), "--variant", "vanilla", "--out"])
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_for(mut ok: impl FnMut() -> bool) {
    for _ in 0..200 {
        if ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting for the emulator");
}

fn nix_kill(pid: u32, sig: &str) {
    Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
}

fn processes_named(cmdline: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", &format!("^{cmdline}$")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A scripted RIC (the xApp SDK's RIC side of E2AP,
/// `tcran_xapp::termination`, over framed TCP on loopback) drives `tcran
/// emulate --e2` while iperf3 downloads through the cell: the emulator
/// sets up as E2 node gNB 1, the RIC subscribes to E2SM-TCRAN reports
/// every 100 ms, and once the download is under way sends one FlexRIC TC
/// control, a 3 Mbit/s shaper on the DRB's queue. The reports (counters
/// of the real packets) and iperf3's own measurement show the download
/// slowed to the shaper's rate; the emulator's outputs record the change
/// as made by E2.
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn a_ric_shapes_real_traffic_over_e2() {
    use std::io::{ErrorKind, Read, Write};
    use std::time::Instant;
    use tcran_e2::sm::e2sm_tcran as tcsm;
    use tcran_e2::sm::flexric_tc::PlainControl;
    use tcran_xapp::termination::{ControlAnswer, Event, SubscriptionAnswer, Termination};

    const RATE_BPS: f64 = 3e6;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let dir = out_dir("e2");
    let iperf = dir.join("iperf.json");
    let mut child = tcran()
        .args(["emulate", &scenario(), "--variant", "vanilla", "--out"])
        .arg(&dir)
        .args(["--e2", &addr, "--server", "iperf3 -s -1", "--", "sh", "-c"])
        .arg(format!(
            "sleep 0.3; iperf3 -c 198.51.100.1 -R -C cubic -t 10 -J > {}",
            iperf.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // The node connects within a few seconds, or the run failed.
    listener.set_nonblocking(true).unwrap();
    let t0 = Instant::now();
    let mut stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                assert!(
                    t0.elapsed() < Duration::from_secs(10),
                    "the emulator never connected"
                );
                assert!(child.try_wait().unwrap().is_none(), "the emulator ended");
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("accept: {e}"),
        }
    };
    stream.set_nonblocking(false).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();

    let mut ric = Termination::new(tcran_e2::e2ap::GlobalRicId {
        plmn: [0x00, 0xf1, 0x10],
        ric_id: 1,
    });
    let mut inbuf: Vec<u8> = Vec::new();
    // (seconds since the RIC started, bytes the DRB's pipeline let out)
    let mut samples: Vec<(f64, u64)> = Vec::new();
    let mut shaped_reported = false;
    let mut control_sent: Option<f64> = None;
    let mut acknowledged = false;
    let mut subscribed = false;
    let start = Instant::now();
    let mut chunk = vec![0u8; 64 * 1024];
    // Until the association ends with the run (at most 30 s).
    'run: while start.elapsed() < Duration::from_secs(30) {
        match stream.read(&mut chunk) {
            Ok(0) => break 'run,
            Ok(n) => inbuf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break 'run,
        }
        // Whole frames: a 4-byte big-endian length, then the PDU.
        while inbuf.len() >= 4 {
            let n = u32::from_be_bytes(inbuf[..4].try_into().unwrap()) as usize;
            if inbuf.len() < 4 + n {
                break;
            }
            ric.handle(&inbuf[4..4 + n]);
            inbuf.drain(..4 + n);
        }
        let now = start.elapsed().as_secs_f64();
        while let Some(ev) = ric.poll_event() {
            match ev {
                Event::SetupDone { node, functions } => {
                    assert_eq!(tcran_e2::e2ap::node_id_string(&node), "gnb:00f110:1");
                    assert!(functions.iter().any(|f| f.id == 146));
                    assert!(functions
                        .iter()
                        .any(|f| f.id == tcsm::DEFAULT_RAN_FUNCTION_ID));
                    let trig = tcsm::event_trigger(&tcsm::Trigger::Periodic { period_ms: 100 });
                    ric.subscribe(
                        tcsm::DEFAULT_RAN_FUNCTION_ID,
                        trig,
                        vec![tcran_e2::e2ap::Action {
                            id: 1,
                            kind: tcran_e2::e2ap::ActionType::Report,
                            definition: None,
                            subsequent: None,
                        }],
                    )
                    .unwrap();
                }
                Event::Subscription { answer, .. } => {
                    assert!(
                        matches!(answer, SubscriptionAnswer::Admitted { .. }),
                        "{answer:?}"
                    );
                    subscribed = true;
                }
                Event::Indication(ind) => {
                    let (_, msg) = tcsm::decode_indication(&ind.header, &ind.message).unwrap();
                    let out: u64 = msg.reports.0.iter().map(|r| r.totals.out_bytes.0).sum();
                    samples.push((now, out));
                    shaped_reported |= control_sent.is_some()
                        && msg.reports.0.iter().any(|r| {
                            r.queues.0.iter().any(|q| {
                                q.shaper
                                    .as_ref()
                                    .is_some_and(|s| s.rate_bps.0 == RATE_BPS as u64)
                            })
                        });
                }
                Event::Control { answer, .. } => {
                    assert!(
                        matches!(answer, ControlAnswer::Acknowledged { .. }),
                        "{answer:?}"
                    );
                    acknowledged = true;
                }
                Event::Closed(_) => break 'run,
                _ => {}
            }
        }
        // The download is under way (2 MB through the pipeline) and has
        // run for 2.5 s more: shape it.
        let started = samples.iter().find(|(_, b)| *b > 2_000_000).map(|s| s.0);
        if control_sent.is_none() && started.is_some_and(|t| now > t + 2.5) {
            let shaper = PlainControl::ShpMod {
                id: 0,
                window_ms: 100,
                rate_kbps: (RATE_BPS / 1000.0) as u32,
                active: 1,
            };
            ric.control(146, vec![0; 4], shaper.encode()).unwrap();
            control_sent = Some(now);
        }
        while let Some(pdu) = ric.poll_transmit() {
            let mut f = (pdu.len() as u32).to_be_bytes().to_vec();
            f.extend_from_slice(&pdu);
            if stream.write_all(&f).is_err() {
                break 'run;
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tcran emulate --e2 failed: {stderr}");
    assert!(subscribed && acknowledged, "{stderr}");
    assert!(shaped_reported, "no report shows the shaper");

    // The pipeline's output rate (real packets) over a window of reports.
    let rate = |from: f64, to: f64| {
        let w: Vec<&(f64, u64)> = samples
            .iter()
            .filter(|(t, _)| *t >= from && *t <= to)
            .collect();
        let (a, b) = (w.first().unwrap(), w.last().unwrap());
        (b.1 - a.1) as f64 * 8.0 / (b.0 - a.0)
    };
    let c = control_sent.unwrap();
    let before = rate(c - 1.5, c);
    let last = samples.last().unwrap().0;
    let after = rate(c + 2.0, last.min(c + 5.0));
    assert!(
        before > 2.0 * RATE_BPS,
        "before the control: {before:.0} bit/s"
    );
    assert!(
        after < 1.1 * RATE_BPS && after > 0.5 * RATE_BPS,
        "after the control: {after:.0} bit/s (shaper {RATE_BPS} bit/s)"
    );

    // iperf3's own measurement: its last two seconds at the shaper's rate.
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&iperf).unwrap()).unwrap();
    let intervals = report["intervals"].as_array().unwrap();
    let bps = |i: &Value| i["sum"]["bits_per_second"].as_f64().unwrap();
    let tail: f64 = intervals[intervals.len() - 2..]
        .iter()
        .map(bps)
        .sum::<f64>()
        / 2.0;
    assert!(
        tail < 1.2 * RATE_BPS,
        "iperf3's last two seconds: {tail:.0} bit/s"
    );
    assert!(
        intervals[1..3].iter().map(bps).sum::<f64>() / 2.0 > 2.0 * RATE_BPS,
        "iperf3 before the control: {intervals:?}"
    );

    // The outputs record the change as made over E2.
    let s = summary(&dir);
    let v = &s["variants"][0];
    assert_eq!(v["reconfigurations"]["applied"], 1, "{v}");
    assert_eq!(v["reconfigurations"]["failed"], 0, "{v}");
    let csv = std::fs::read_to_string(dir.join("vanilla/reconfigurations.csv")).unwrap();
    assert!(csv.lines().skip(1).any(|l| l.contains(",e2,")), "{csv}");
    let emu: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("emulation.json")).unwrap())
            .unwrap();
    // The hosts' devices were read: their kernel counters are there.
    let drops = &emu["device_drops"];
    assert!(
        drops["not_read"].is_u64() && drops["not_taken"].is_u64(),
        "{drops}"
    );
    let e2 = &emu["e2"];
    assert_eq!(e2["setups_done"], 1, "{e2}");
    assert_eq!(e2["controls_applied"], 1, "{e2}");
    assert!(e2["indications"].as_u64().unwrap() >= 50, "{e2}");
}

fn uplink_scenario() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/uplink-backup.toml")
        .display()
        .to_string()
}

/// The flows of scenarios/uplink-backup.toml for `tcran run`: a CUBIC
/// upload and a 5 Hz ping from the UE, what [`upload`] runs for real.
const UPLOAD_FLOWS: &str = "flows=[\
    { name = \"bulk\", ue = 1, direction = \"uplink\", kind = \"tcp\", start = \"300ms\", tcp = { cc = \"cubic\" } }, \
    { name = \"ping\", ue = 1, direction = \"uplink\", kind = \"ping\", interval = \"200ms\", start = \"300ms\" }]";

/// A real upload with the kernel's CUBIC (iperf3 without -R) and a real
/// ping from the UE of scenarios/uplink-backup.toml, through its uplink
/// DRB, for `secs` seconds (the first 4 not measured): the summary and
/// `emulation.json`.
fn upload(variant: &str, dir: &Path, secs: u64) -> (Value, Value) {
    let scn = uplink_scenario();
    let duration = format!("{secs}s");
    // The programs outlast the run (both sides then measure the same
    // seconds) and are ended with it: the UE command's exit code is then
    // 128 + SIGTERM.
    let args = [
        "emulate",
        &scn,
        "--variant",
        variant,
        "--out",
        dir.to_str().unwrap(),
        "--warmup",
        "4s",
        "--duration",
        &duration,
        "--server",
        "iperf3 -s -1",
        "--",
        "sh",
        "-c",
        &format!(
            "sleep 0.3; ping -n -q -i 0.2 198.51.100.1 >/dev/null & \
             iperf3 -c 198.51.100.1 -C cubic -t {} >/dev/null; wait",
            secs + 5
        ),
    ];
    let out = tcran().args(args).stdin(Stdio::null()).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 143)),
        "tcran {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let emu = serde_json::from_str(&std::fs::read_to_string(dir.join("emulation.json")).unwrap())
        .unwrap();
    (summary(dir), emu)
}

/// The variant's flow of `kind` whose data go `direction` and that
/// carried the most packets.
fn directed<'a>(s: &'a Value, kind: &str, direction: &str) -> &'a Value {
    flows(s)
        .iter()
        .filter(|f| f["kind"] == kind && f["direction"].as_str().unwrap_or("downlink") == direction)
        .max_by_key(|f| f["delivered_packets"].as_u64().unwrap())
        .unwrap_or_else(|| panic!("no {direction} {kind} flow in {s}"))
}

/// Every packet the relay read is in the ledger, in its direction, and
/// the ledger balances: created = delivered + dropped + in flight.
fn ledger_balances_both_ways(s: &Value, emu: &Value) {
    let v = &s["variants"][0];
    let p = &v["packets"];
    assert_eq!(p["unaccounted"], 0, "{p}");
    let n = |k: &str| p[k].as_u64().unwrap();
    assert_eq!(
        n("created"),
        n("delivered") + n("dropped") + n("in_flight"),
        "{p}"
    );
    let created = |direction: &str| -> u64 {
        flows(s)
            .iter()
            .filter(|f| f["direction"].as_str().unwrap_or("downlink") == direction)
            .map(|f| f["created_packets"].as_u64().unwrap())
            .sum()
    };
    let relay = &emu["relay"];
    assert_eq!(
        created("uplink"),
        relay["uplink_in"].as_u64().unwrap(),
        "{relay}"
    );
    assert_eq!(
        created("downlink"),
        relay["downlink_in"].as_u64().unwrap(),
        "{relay}"
    );
    assert!(relay["uplink_in"].as_u64().unwrap() > 1_000, "{relay}");
}

/// A real upload bloats the UE's 5 MB RLC buffer as the simulator's
/// modelled one does: the ping behind it waits for hundreds of
/// milliseconds. The UE-side cure (UDP and ICMP first, 20 kB in RLC) cuts
/// the ping's RTT more than fivefold at the same throughput. Both runs
/// agree with the simulator running the same cell with a modelled CUBIC
/// upload and ping (RTT within 10 %, the bar of docs/emulator.md;
/// throughput within 2 %), and the ledger balances both ways in both.
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn a_real_upload_bloats_the_ues_buffer_and_a_ue_side_pipeline_cures_it() {
    const SECS: u64 = 12;
    let (v, v_emu) = upload("vanilla", &out_dir("up-vanilla"), SECS);
    let (c, c_emu) = upload("priority+static", &out_dir("up-cured"), SECS);
    ledger_balances_both_ways(&v, &v_emu);
    ledger_balances_both_ways(&c, &c_emu);
    let sim = out_dir("up-sim");
    run(&[
        "run",
        &uplink_scenario(),
        "--out",
        sim.to_str().unwrap(),
        "--set",
        UPLOAD_FLOWS,
        "--set",
        "warmup=4s",
        "--set",
        &format!("duration={SECS}s"),
    ]);
    let modelled = summary(&sim);
    let variant = |name: &str| {
        modelled["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap()
            .clone()
    };
    let rtt = |f: &Value| f["rtt_ms"]["mean"].as_f64().unwrap();
    let thr = |f: &Value| f["throughput_mbps"].as_f64().unwrap();
    let one = |v: Value| serde_json::json!({ "variants": [v] });
    let (sim_v, sim_c) = (one(variant("vanilla")), one(variant("priority+static")));
    let (rv, rc) = (
        rtt(directed(&v, "ping", "uplink")),
        rtt(directed(&c, "ping", "uplink")),
    );
    assert!(rc < rv / 5.0, "cured {rc:.1} ms vs vanilla {rv:.1} ms");
    for (emu, sim) in [(&v, &sim_v), (&c, &sim_c)] {
        let (e, s) = (
            rtt(directed(emu, "ping", "uplink")),
            rtt(directed(sim, "ping", "uplink")),
        );
        assert!(
            (e - s).abs() <= 0.1 * s,
            "ping RTT {e:.1} ms, simulated {s:.1} ms"
        );
        // 2 %: 8 measured seconds, not the 25 of docs/emulator.md's 1 %.
        let (e, s) = (
            thr(directed(emu, "tcp", "uplink")),
            thr(directed(sim, "tcp", "uplink")),
        );
        assert!(
            (e - s).abs() <= 0.02 * s,
            "upload {e:.2} Mbit/s, simulated {s:.2}"
        );
    }
}

/// Real traffic across a handover (`[[cells]]`, the two sites of
/// scenarios/handover-guard.toml 500 m apart, UMa NLOS without shadowing,
/// the UE from the cells' midpoint at 10 m/s): the kernel's CUBIC
/// download and a ping from the UE cross the A3 handover from cell 1 to
/// cell 2 (by hand, the target is 3 dB stronger at 272 m, 2.2 s in; the
/// 256-ms time-to-trigger and the layer-3 filter add their lag); the
/// vanilla bearer's RLC AM backlog crosses Xn with it, no packet is lost
/// (iperf3 and ping end well, ping counts every reply), the ledger
/// balances, and the handover's impact covers the live flows.
#[test]
#[ignore = "needs root and real time: make emu-test"]
fn real_traffic_hands_over_between_cells() {
    let dir = out_dir("handover");
    let scn = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/handover-guard.toml")
        .display()
        .to_string();
    let out = run(&[
        "emulate",
        &scn,
        "--variant",
        "vanilla",
        "--set",
        "ues[0].channel.track=[[250, 0], [450, 0]]",
        "--set",
        "ues[0].channel.los=\"nlos\"",
        "--set",
        "ues[0].channel.shadowing=false",
        "--duration",
        "8s",
        "--out",
        dir.to_str().unwrap(),
        "--server",
        "iperf3 -s -1",
        "--",
        "sh",
        "-c",
        "sleep 0.3; ping -n -q -i 0.1 -c 60 198.51.100.1 & \
         iperf3 -c 198.51.100.1 -R -C cubic -t 6 >/dev/null && wait $!",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("60 packets transmitted, 60 received"),
        "{stdout}"
    );
    let s = summary(&dir);
    let v = &s["variants"][0];
    let hos = v["handovers"].as_array().unwrap();
    assert_eq!(hos.len(), 1, "{hos:?}");
    let h = &hos[0];
    assert_eq!(
        (h["source"].as_u64(), h["target"].as_u64()),
        (Some(1), Some(2))
    );
    let at = h["at_s"].as_f64().unwrap();
    assert!((2.2..5.0).contains(&at), "handover at {at} s");
    assert!(h["forwarded_packets"].as_u64().unwrap() > 0, "{h}");
    assert_eq!(h["dropped_packets"].as_u64(), Some(0), "{h}");
    // The live download and ping are measured as a modelled download and
    // call: the download's goodput before, the ping's delays around it.
    assert!(h["tcp_before_mbps"].as_f64().unwrap() > 1.0, "{h}");
    let (before, around) = (
        h["call_delay_before_ms"].as_f64().unwrap(),
        h["call_max_delay_ms"].as_f64().unwrap(),
    );
    assert!(around >= before, "{h}");
    assert_eq!(
        v["packets"]["unaccounted"].as_u64(),
        Some(0),
        "{}",
        v["packets"]
    );
    assert!(flow(&s, "tcp")["throughput_mbps"].as_f64().unwrap() > 1.0);
}
