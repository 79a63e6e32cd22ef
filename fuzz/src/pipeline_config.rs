//! Body of the `pipeline_config` fuzz target.
//!
//! Also compiled into `crates/tcran-tc/tests/integration/fuzz_config.rs` with
//! `#[path = "../../../fuzz/src/pipeline_config.rs"]`, so it may only use
//! what that test can: `tcran_tc`, `tcran_core`, `tcran_wire`, `toml` and
//! `serde_json`.
//!
//! Invariants (a violation panics, which the fuzzer reports as a crash):
//! - Parsing arbitrary text as TOML or JSON and `build()` never panic; a
//!   bad config is an `Err`.
//! - A pipeline that builds survives a short workload of metadata packets,
//!   real-byte packets (IPv4/IPv6, with and without SDAP header, ECN-capable
//!   so markers touch the bytes) and malformed bytes, with per-TTI lower
//!   layer reports and pulls, and stays conserved (in = out + dropped +
//!   queued, packets and bytes) after every step.
//! - A forwarded live packet's bytes agree with its metadata ECN (a CE
//!   mark reached the header), and a marked IPv4 header still verifies.
//! - `config()` of a built pipeline builds again, and a built config
//!   survives a JSON round trip (what the control plane sends).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use tcran_core::packet::{L4Meta, TcpFlags, TcpMeta};
use tcran_core::{Dscp, Duration, Ecn, FiveTuple, Instant, Packet, PacketId, Protocol};
use tcran_tc::{LowerLayerReport, PipelineConfig};
use tcran_wire::{Ipv4Spec, Ipv6Spec, SdapDlHeader, TcpSpec};

/// Entry point: `data` as UTF-8 text, tried as TOML and as JSON.
pub fn fuzz_pipeline_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = toml::from_str::<PipelineConfig>(text) {
        exercise(&config);
    }
    if let Ok(config) = serde_json::from_str::<PipelineConfig>(text) {
        exercise(&config);
    }
}

const TTI: Duration = Duration::from_millis(1);
/// Bytes the emulated MAC takes from RLC per TTI (about 12 Mbit/s).
const MAC_BYTES_PER_TTI: u64 = 1_500;
const ROUNDS: u64 = 24;
const PACKETS_PER_ROUND: u64 = 6;

/// Builds `config` and, if it builds, drives it for a few TTIs.
pub fn exercise(config: &PipelineConfig) {
    let Ok(mut pipeline) = config.build() else {
        return;
    };
    let again = pipeline.config();
    if let Err(e) = again.build() {
        panic!("config() of a built pipeline does not build: {e}\n{again:#?}");
    }
    if let Ok(json) = serde_json::to_string(config) {
        match serde_json::from_str::<PipelineConfig>(&json) {
            Ok(back) => assert!(
                back.build().is_ok(),
                "JSON round trip no longer builds: {json}"
            ),
            Err(e) => panic!("a config that builds does not re-read from its JSON: {e}\n{json}"),
        }
    }

    let mut now = Instant::from_millis(1);
    let mut rlc_bytes: u64 = 0;
    let mut rlc_sdus: u32 = 0;
    let mut id = 0;
    for round in 0..ROUNDS {
        for k in 0..PACKETS_PER_ROUND {
            id += 1;
            let packet = make_packet(id, round * PACKETS_PER_ROUND + k, now);
            let _ = pipeline.push(packet, now);
            assert_conserved(&pipeline);
        }
        // Pull what the pacer lets through (bounded, in case it lets all).
        for _ in 0..4 * PACKETS_PER_ROUND {
            let Some(packet) = pipeline.pull(now) else {
                break;
            };
            check_forwarded(&packet);
            rlc_bytes += u64::from(packet.len);
            rlc_sdus += 1;
            assert_conserved(&pipeline);
        }
        pipeline.drain_dropped().for_each(drop);
        // The MAC drains the RLC buffer; SDUs leave whole.
        let pulled = rlc_bytes.min(MAC_BYTES_PER_TTI);
        rlc_bytes -= pulled;
        if pulled > 0 && rlc_sdus > 0 {
            rlc_sdus -= 1;
            pipeline.on_sdu_departed(Duration::from_millis(round % 7), now);
        }
        if round % 5 == 4 {
            pipeline.on_status_pdu(now);
        }
        let report = LowerLayerReport {
            tti: TTI,
            backlog_bytes: rlc_bytes,
            backlog_sdus: rlc_sdus,
            pulled_bytes: pulled,
            granted_bytes: MAC_BYTES_PER_TTI,
            max_bytes: 4 * MAC_BYTES_PER_TTI,
            ..LowerLayerReport::default()
        };
        pipeline.on_report(&report, now);
        let next = pipeline.next_wakeup(now);
        now += TTI;
        if let Some(t) = next {
            // Jump to an early wake-up now and then, never backwards.
            if t > now && round % 3 == 0 && t < now + Duration::from_millis(50) {
                now = t;
            }
        }
        assert_conserved(&pipeline);
    }
    let _ = pipeline.stats(now);
    assert_eq!(
        pipeline.queued_packets() as u64,
        pipeline.totals().queued_packets
    );
}

fn assert_conserved(p: &tcran_tc::Pipeline) {
    let t = p.totals();
    assert!(t.conserved(), "conservation broken: {t:?}");
}

/// A forwarded live packet's ECN metadata must match its header bytes.
fn check_forwarded(packet: &Packet) {
    let Some(bytes) = packet.payload.as_deref() else {
        return;
    };
    if packet.malformed {
        return;
    }
    let h = tcran_wire::parse(bytes, packet.sdap_header)
        .expect("a forwarded packet that parsed on entry still parses");
    assert_eq!(h.ecn, packet.ecn, "ECN metadata and header bytes disagree");
    let ip = &bytes[usize::from(packet.sdap_header)..];
    if ip[0] >> 4 == 4 {
        assert!(
            tcran_wire::ipv4_header_checksum_ok(ip),
            "IPv4 checksum broken after the pipeline"
        );
    }
}

fn make_packet(id: u64, n: u64, now: Instant) -> Packet {
    let len = [64u32, 576, 1200, 1500, 40, 9000][(n % 6) as usize];
    let ecn = [Ecn::Ect0, Ecn::Ect1, Ecn::NotEct, Ecn::Ce][(n % 4) as usize];
    let dscp = Dscp([0u8, 46, 34, 8, 40, 63][(n / 6 % 6) as usize]);
    let port = 5000 + (n % 13) as u16;
    match n % 7 {
        // Metadata-only UDP over IPv4 (the simulator's packets).
        0 | 1 => {
            let tuple = FiveTuple {
                src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 45, 0, (n % 4) as u8)),
                sport: 40_000,
                dport: port,
                proto: Protocol::UDP,
            };
            let mut p = Packet::new(PacketId(id), len, tuple, now);
            p.ecn = ecn;
            p.dscp = dscp;
            p.l4 = L4Meta::Udp { seq: n };
            p
        }
        // Metadata-only TCP over IPv6.
        2 => {
            let tuple = FiveTuple {
                src: IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
                dst: IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2)),
                sport: 443,
                dport: port,
                proto: Protocol::TCP,
            };
            let mut p = Packet::new(PacketId(id), len, tuple, now);
            p.ecn = ecn;
            p.dscp = dscp;
            p.l4 = L4Meta::Tcp(TcpMeta {
                seq: n * 1448,
                payload: len.saturating_sub(60),
                ..TcpMeta::default()
            });
            p
        }
        // Real IPv4/UDP bytes.
        3 => {
            let mut ip = Ipv4Spec::new(Ipv4Addr::new(192, 0, 2, 1), Ipv4Addr::new(10, 45, 0, 7));
            ip.ecn = ecn;
            ip.dscp = dscp;
            let payload = vec![0u8; (len as usize).saturating_sub(28).min(1472)];
            let bytes = tcran_wire::build_ipv4_udp(&ip, 4000, port, &payload).expect("fits");
            tcran_wire::packet_from_bytes(PacketId(id), bytes.into(), false, now)
        }
        // Real IPv6/TCP bytes behind an SDAP header.
        4 => {
            let mut ip = Ipv6Spec::new(
                Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 10),
                Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 20),
            );
            ip.ecn = ecn;
            ip.dscp = dscp;
            let tcp = TcpSpec {
                sport: 443,
                dport: port,
                seq: n as u32,
                ack: 1,
                flags: TcpFlags(TcpFlags::ACK),
                window: 1000,
                sack: [(0, 0); 3],
            };
            let payload = vec![0u8; (len as usize).saturating_sub(60).min(1440)];
            let ipb = tcran_wire::build_ipv6_tcp(&ip, &tcp, &payload).expect("fits");
            let sdap = SdapDlHeader::from_byte((n % 64) as u8);
            let bytes = tcran_wire::with_sdap(sdap, &ipb);
            tcran_wire::packet_from_bytes(PacketId(id), bytes.into(), true, now)
        }
        // Bytes that do not parse.
        5 => {
            let bytes = vec![0xa5u8; (len as usize).min(200)];
            tcran_wire::packet_from_bytes(PacketId(id), bytes.into(), n & 1 == 0, now)
        }
        // Metadata-only ICMP echo, Not-ECT.
        _ => {
            let tuple = FiveTuple {
                src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 45, 0, 1)),
                sport: 0,
                dport: 0,
                proto: Protocol::ICMP,
            };
            let mut p = Packet::new(PacketId(id), 84, tuple, now);
            p.l4 = L4Meta::IcmpEcho {
                ident: 1,
                seq: n as u16,
                reply: false,
            };
            p
        }
    }
}
