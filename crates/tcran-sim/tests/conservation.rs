//! Whole-stack packet conservation: every downlink packet a server creates
//! (retransmissions included) is delivered to its UE or dropped with a
//! counted reason, with every layer losing packets: the UPF queue and the
//! TC pipeline (tail drops), a full RLC buffer (a bearer without pacer), HARQ giving up on
//! the air (UM loses the SDU; AM retransmits, then gives up), and SDAP
//! dropping a QFI no DRB carries; with the MAC scheduling every slot or
//! once per scheduling period, with or without the uplink SR/grant model. The sources stop early and the run goes
//! on long enough for everything to drain, so nothing is left in flight.

use proptest::prelude::*;
use std::path::Path;
use tcran_sim::{RunSummary, Sim, SimConfig};

/// `period_ms`: the MAC's scheduling period (0: every slot); `sr_ms`: the
/// uplink SR period (0: no SR/grant model).
fn scenario(
    seed: u64,
    bler: f64,
    rlc_kb: u32,
    tc_limit: u32,
    period_ms: u32,
    sr_ms: u32,
) -> String {
    let period = if period_ms == 0 {
        String::new()
    } else {
        format!("scheduling_period = \"{period_ms}ms\"")
    };
    let uplink = if sr_ms == 0 {
        String::new()
    } else {
        format!("uplink = {{ sr_period = \"{sr_ms}ms\", grant_delay = \"4ms\" }}")
    };
    // Long enough for the 3 MB download to finish even with heavy losses
    // and a slow uplink (it needs about 35 s with bler 0.24, a 20 kB RLC
    // buffer and a 20-ms SR period).
    format!(
        r#"
    duration = "45s"
    seed = {seed}
    {uplink}
    [cell]
    bandwidth_mhz = 5
    bler = {bler}
    max_harq_tx = 2
    {period}

    [[ues]]
    rnti = 1
    channel = {{ kind = "mcs", mcs = 20 }}
    sdap = {{ rules = [ {{ qfi = 1, drb = 1 }}, {{ qfi = 2, drb = 2 }} ] }}
    [[ues.drbs]]
    id = 1
    rlc = {{ mode = "am", buffer_limit = "{rlc_kb}kB", max_retx_threshold = 2 }}
    [ues.drbs.pipeline]
    default_queue = 1
    classifier = {{ kind = "filter", rules = [ {{ priority = 1, protocol = "udp", queue = 0 }} ] }}
    scheduler = {{ kind = "priority" }}
    pacer = {{ kind = "bdp" }}
    [[ues.drbs.pipeline.queues]]
    id = 0
    kind = "fifo"
    limit_packets = {tc_limit}
    [[ues.drbs.pipeline.queues]]
    id = 1
    kind = "codel"
    priority = 1
    [[ues.drbs]]
    id = 2
    rlc = {{ mode = "um", buffer_limit = "{rlc_kb}kB" }}

    [[ues]]
    rnti = 2
    channel = {{ kind = "mcs", mcs = 16 }}
    [[ues.drbs]]
    id = 1
    rlc = {{ mode = "um", buffer_limit = "{rlc_kb}kB" }}
    [ues.drbs.pipeline]
    pacer = {{ kind = "bdp" }}
    [[ues.drbs.pipeline.queues]]
    id = 0
    kind = "fifo"
    [ues.upf.pipeline]
    pacer = {{ kind = "usp" }}
    [[ues.upf.pipeline.queues]]
    id = 0
    kind = "fifo"
    limit_packets = {tc_limit}

    [[flows]]
    name = "download1"
    ue = 1
    qfi = 1
    kind = "tcp"
    size = "3MB"
    tcp = {{ cc = "cubic" }}
    [[flows]]
    name = "burst1"
    ue = 1
    qfi = 2
    kind = "cbr"
    rate = "20Mbit/s"
    size = "1200B"
    start = "1s"
    stop = "3s"
    [[flows]]
    name = "burst1b"
    ue = 1
    qfi = 1
    kind = "cbr"
    rate = "20Mbit/s"
    size = "1200B"
    start = "2s"
    stop = "3s"
    [[flows]]
    name = "unmapped"
    ue = 1
    qfi = 9
    kind = "voip"
    stop = "2s"
    [[flows]]
    name = "download2"
    ue = 2
    kind = "tcp"
    size = "2MB"
    tcp = {{ cc = "bbr" }}
    [[flows]]
    name = "video2"
    ue = 2
    kind = "video"
    fps = 60
    frame_size = "20000B"
    stop = "5s"
    "#
    )
}

fn run(text: &str) -> RunSummary {
    let cfg: SimConfig = toml::from_str(text).expect("scenario parses");
    Sim::new(&cfg, Path::new("."))
        .expect("scenario builds")
        .run()
        .summary
}

fn check(s: &RunSummary) -> Result<(), TestCaseError> {
    let p = s.packets;
    prop_assert_eq!(
        p.created,
        p.delivered + p.dropped,
        "{:?} drops {:?}",
        p,
        s.drops
    );
    prop_assert_eq!(p.in_flight, 0);
    let by_reason: u64 = s.drops.values().flat_map(|m| m.values()).sum();
    prop_assert_eq!(by_reason, p.dropped);
    let by_flow: u64 = s.flows.iter().map(|f| f.lost_packets).sum();
    prop_assert_eq!(by_flow, p.dropped);
    Ok(())
}

#[test]
fn every_layer_drops_and_every_packet_is_accounted_for() {
    let s = run(&scenario(1, 0.2, 60, 30, 0, 0));
    check(&s).unwrap();
    for (layer, reason) in [
        ("sdap", "no_route"),
        ("upf", "queue_full"),
        ("tc", "queue_full"),
        ("rlc", "rlc_full"),
        ("air", "air_loss"),
    ] {
        assert!(
            s.drops
                .get(layer)
                .and_then(|m| m.get(reason))
                .is_some_and(|n| *n > 0),
            "no {layer}/{reason} drop: {:?}",
            s.drops
        );
    }
    // The finite downloads completed despite the losses.
    assert!(s.packets.delivered > 3_000_000 / 1500 + 2_000_000 / 1500);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn conservation_holds_for_any_seed_and_sizes(
        seed in 0u64..1000,
        bler in 0.0f64..0.3,
        rlc_kb in 20u32..400,
        tc_limit in 5u32..200,
        period_ms in prop::sample::select(vec![0u32, 0, 2, 10]),
        sr_ms in prop::sample::select(vec![0u32, 0, 5, 20]),
    ) {
        check(&run(&scenario(seed, bler, rlc_kb, tc_limit, period_ms, sr_ms)))?;
    }
}
