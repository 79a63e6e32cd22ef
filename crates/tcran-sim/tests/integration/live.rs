//! Live traffic through the uplink DRBs (the emulator's path, driven here
//! by hand as `tcran_emu::relay` drives it): a UE with
//! `[[ues.uplink_drbs]]` sends through the same UE-side stack as a modelled
//! uplink flow, and every packet it sends is in the ledger.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use tcran_core::packet::L4Meta;
use tcran_core::{FiveTuple, Instant, Packet, PacketId, Protocol, Rnti};
use tcran_sim::{LiveOutput, RunSummary, Sim, SimConfig};

/// The cell of scenarios/uplink-backup.toml: 25 PRB FDD, MCS 10, one UE
/// with an uplink DRB (RLC UM, 5 MB); UPLINK_DRB is replaced by the DRB
/// or by nothing.
const CELL: &str = r#"
    duration = "3s"
    warmup = "0s"
    core_delay = "10ms"
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 10 }
    UPLINK_DRB
"#;

const DRB: &str = r#"[[ues.uplink_drbs]]
    rlc = { mode = "um", buffer_limit = "5MB" }"#;

const UE: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 45, 0, 1));
const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1));

fn config(uplink_drb: bool) -> SimConfig {
    toml::from_str(&CELL.replace("UPLINK_DRB", if uplink_drb { DRB } else { "" })).unwrap()
}

fn echo(from_ue: bool, seq: u16, reply: bool, at: Instant) -> Packet {
    let (src, dst) = if from_ue { (UE, SERVER) } else { (SERVER, UE) };
    let tuple = FiveTuple {
        src,
        dst,
        sport: 0,
        dport: 0,
        proto: Protocol::ICMP,
    };
    let mut p = Packet::new(PacketId(0), 84, tuple, at);
    p.l4 = L4Meta::IcmpEcho {
        ident: 7,
        seq,
        reply,
    };
    p
}

fn udp_up(at: Instant) -> Packet {
    let tuple = FiveTuple {
        src: UE,
        dst: SERVER,
        sport: 40_000,
        dport: 5_201,
        proto: Protocol::UDP,
    };
    Packet::new(PacketId(0), 1_400, tuple, at)
}

/// Drives a live run as the emulator's relay does: the UE pings the server
/// every 100 ms from 0.5 s and (with `udp_bps`) sends 1,400-byte UDP
/// datagrams at that rate; the server answers each echo request the
/// instant it reaches it. Returns the summary and the packets written to
/// the server side and to the UE.
fn live_run(uplink_drb: bool, udp_bps: u64) -> (RunSummary, u64, u64) {
    let cfg = config(uplink_drb);
    let mut sim = Sim::new_live(&cfg, Path::new("."), false).unwrap();
    let end = Instant::ZERO + cfg.duration;
    let mut inputs: Vec<(Instant, Packet)> = (0..20u16)
        .map(|k| {
            let at = Instant::from_millis(500 + 100 * u64::from(k));
            (at, echo(true, k, false, at))
        })
        .collect();
    if let Some(gap) = (1_400 * 8 * 1_000_000_000u64).checked_div(udp_bps) {
        let mut t = 0;
        while t < 2_500_000_000 {
            let at = Instant::from_nanos(t);
            inputs.push((at, udp_up(at)));
            t += gap;
        }
    }
    inputs.sort_by_key(|(at, _)| *at);
    let mut inputs = inputs.into_iter().peekable();
    let (mut to_server, mut to_ue) = (0, 0);
    loop {
        let next_input = inputs.peek().map(|(at, _)| *at);
        let Some(t) = Instant::earliest(next_input, sim.next_event_time()).filter(|t| *t < end)
        else {
            break;
        };
        if next_input == Some(t) {
            // A modelled sender's packet at t enters before the node's
            // events at t (Sim's contract): so does this one, which a
            // real packet, read between two slots, always does.
            sim.run_until(Instant::from_nanos(t.as_nanos().saturating_sub(1)));
            while inputs.peek().is_some_and(|(at, _)| *at == t) {
                let (at, p) = inputs.next().unwrap();
                sim.live_uplink(Rnti(1), p, at);
            }
        } else {
            sim.run_until(t);
        }
        while let Some(out) = sim.poll_live() {
            match out {
                LiveOutput::ToServer { packet, at } => {
                    to_server += 1;
                    if let L4Meta::IcmpEcho { seq, .. } = packet.l4 {
                        sim.live_downlink(echo(false, seq, true, at), at);
                    }
                }
                LiveOutput::ToUe { .. } => to_ue += 1,
            }
        }
    }
    (sim.finish_at(end).summary, to_server, to_ue)
}

/// The same cell simulated with a modelled uplink ping at the same
/// instants: its mean RTT.
fn modelled_uplink_ping_rtt() -> f64 {
    let mut cfg = config(true);
    let flow = r#"
        [[flows]]
        name = "ping"
        ue = 1
        direction = "uplink"
        kind = "ping"
        interval = "100ms"
        start = "500ms"
        start_jitter = "0s"
        stop = "2.45s"
    "#;
    let flows: SimConfig =
        toml::from_str(&CELL.replace("UPLINK_DRB", &format!("{DRB}\n{flow}"))).unwrap();
    cfg.flows = flows.flows;
    let s = Sim::new(&cfg, Path::new(".")).unwrap().run().summary;
    let f = s.flows.iter().find(|f| f.name == "ping").unwrap();
    assert_eq!(f.rtt_ms.unwrap().count, 20, "{f:?}");
    f.rtt_ms.unwrap().mean
}

fn ledger_balances(s: &RunSummary) {
    let p = &s.packets;
    assert_eq!(p.unaccounted, 0, "{p:?}");
    assert_eq!(p.created, p.delivered + p.dropped + p.in_flight, "{p:?}");
    let per_flow: u64 = s.flows.iter().map(|f| f.created_packets).sum();
    assert_eq!(per_flow, p.created, "{:?}", s.flows);
}

/// A live ping from a UE with an uplink DRB crosses the UE's stack (BSR,
/// SR, grant, PUSCH) exactly as the simulator's modelled uplink ping does:
/// the same RTTs, on an uplink flow of the requests; the replies are the
/// downlink flow's data; the ledger counts both.
#[test]
fn a_live_uplink_ping_has_the_modelled_uplink_pings_rtt() {
    let (s, to_server, to_ue) = live_run(true, 0);
    let up = s
        .flows
        .iter()
        .find(|f| f.name == "ping 10.45.0.1 > 198.51.100.1")
        .unwrap_or_else(|| panic!("no uplink ping flow in {:?}", s.flows));
    assert_eq!(up.direction, tcran_sim::scenario::Direction::Uplink);
    let rtt = up.rtt_ms.unwrap();
    assert_eq!(rtt.count, 20);
    assert_eq!((up.created_packets, up.delivered_packets), (20, 20));
    assert_eq!((to_server, to_ue), (20, 20));
    let down = s
        .flows
        .iter()
        .find(|f| f.name == "ping 198.51.100.1 > 10.45.0.1")
        .unwrap();
    assert_eq!(down.direction, tcran_sim::scenario::Direction::Downlink);
    assert_eq!((down.created_packets, down.delivered_packets), (20, 20));
    ledger_balances(&s);
    let modelled = modelled_uplink_ping_rtt();
    assert!(
        (rtt.mean - modelled).abs() < 1e-9,
        "live {:.3} ms vs modelled {modelled:.3} ms",
        rtt.mean
    );
}

/// More than the uplink carries (about 5 Mbit/s at MCS 10): the UE's RLC
/// buffer fills, the ping waits behind the datagrams, and every datagram
/// is delivered, dropped with a reason or still in the UE's stack.
#[test]
fn a_live_upload_beyond_the_uplink_fills_the_ues_buffer_and_balances() {
    let (idle, ..) = live_run(true, 0);
    let (s, ..) = live_run(true, 8_000_000);
    let udp = s
        .flows
        .iter()
        .find(|f| f.name.starts_with("udp 10.45.0.1:40000"))
        .unwrap();
    assert_eq!(udp.direction, tcran_sim::scenario::Direction::Uplink);
    assert!(
        (3.0..6.0).contains(&udp.throughput_mbps),
        "{:.2} Mbit/s",
        udp.throughput_mbps
    );
    assert!(udp.in_flight_packets > 100, "{udp:?}");
    ledger_balances(&s);
    assert!(s.packets.in_flight_by_place.rlc > 0, "{:?}", s.packets);
    let rtt = |s: &RunSummary| {
        s.flows
            .iter()
            .find(|f| f.name == "ping 10.45.0.1 > 198.51.100.1")
            .and_then(|f| f.rtt_ms)
            .map(|r| r.mean)
            .unwrap_or(0.0)
    };
    assert!(rtt(&s) > 10.0 * rtt(&idle), "{} vs {}", rtt(&s), rtt(&idle));
}

/// Without uplink DRBs the uplink is the node's delay model: the UE's
/// packets are not data, one flow per connection (the downlink's) carries
/// the RTTs, as before uplink DRBs existed.
#[test]
fn without_uplink_drbs_a_live_ping_stays_one_downlink_flow() {
    let (s, to_server, to_ue) = live_run(false, 0);
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ping 198.51.100.1 > 10.45.0.1"]);
    let f = &s.flows[0];
    assert_eq!(f.rtt_ms.unwrap().count, 20);
    assert_eq!(f.created_packets, 20);
    assert_eq!((to_server, to_ue), (20, 20));
    ledger_balances(&s);
}
