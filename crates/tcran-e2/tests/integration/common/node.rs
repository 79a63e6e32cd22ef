//! Driving a real `tcran_gnb::Gnb` in tests of the service models'
//! effect on the node.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use tcran_core::{DrbId, Duration, FiveTuple, Instant, Packet, PacketId, Protocol, Rnti};
use tcran_gnb::{ue_address, Gnb, GnbConfig};

pub fn node(text: &str) -> Gnb {
    let cfg: GnbConfig = toml::from_str(text).expect("config parses");
    cfg.build(Path::new(".")).expect("config builds")
}

/// A UDP packet from a server to UE `rnti`.
pub fn packet(rnti: u16, id: u64, len: u32, at: Instant) -> Packet {
    let tuple = FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
        dst: ue_address(Rnti(rnti)),
        sport: 5000,
        dport: 40000,
        proto: Protocol::UDP,
    };
    Packet::new(PacketId(id), len, tuple, at)
}

/// Runs the node's events due by `until`, discarding its outputs.
pub fn run_until(gnb: &mut Gnb, until: Instant) {
    while let Some(t) = gnb.next_wakeup().filter(|t| *t <= until) {
        gnb.on_timeout(t);
        while gnb.poll_output().is_some() {}
    }
}

/// 25 PRBs (5 MHz at 15 kHz, TS 38.101-1 Table 5.3.2-1, 1-ms slots)
/// shared by two UEs whose buffers hold 30 MB each at time zero, so round
/// robin gives each 12.5 PRBs a slot until a control says otherwise.
pub fn two_saturated_ues() -> Gnb {
    let mut gnb = node(
        r#"
        [cell]
        bandwidth_mhz = 5
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 20 }
        [[ues.drbs]]
        id = 1
        rlc = { mode = "um", buffer_limit = "100MB" }
        [[ues]]
        rnti = 2
        channel = { kind = "mcs", mcs = 20 }
        [[ues.drbs]]
        id = 1
        rlc = { mode = "um", buffer_limit = "100MB" }
    "#,
    );
    for i in 0..40_000 {
        gnb.downlink(
            packet(1 + (i % 2) as u16, i, 1500, Instant::ZERO),
            Instant::ZERO,
        );
    }
    gnb
}

/// PRBs per slot of UEs 1 and 2 over the 1-ms slots from `from_ms` to
/// `to_ms`, running the node through them.
pub fn prb_split(gnb: &mut Gnb, from_ms: u64, to_ms: u64) -> (f64, f64) {
    let prbs = |g: &Gnb, rnti| g.drb(Rnti(rnti), DrbId(1)).unwrap().ue_prbs();
    run_until(gnb, Instant::ZERO + Duration::from_millis(from_ms));
    let start = (prbs(gnb, 1), prbs(gnb, 2));
    run_until(gnb, Instant::ZERO + Duration::from_millis(to_ms));
    let slots = (to_ms - from_ms) as f64;
    (
        (prbs(gnb, 1) - start.0) as f64 / slots,
        (prbs(gnb, 2) - start.1) as f64 / slots,
    )
}
