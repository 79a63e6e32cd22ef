//! The control surface of uplink DRBs (`tcran_control::RanNode` with a
//! key whose direction is uplink): the node lists them apart from the
//! downlink's, reports the UE's pipeline and RLC buffer, and applies a
//! change to the UE's pipeline all or nothing, leaving the downlink DRB
//! of the same id alone.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use tcran_control::{DrbKey, RanNode};
use tcran_core::{Duration, FiveTuple, Instant, Packet, PacketId, Protocol, Rnti};
use tcran_gnb::{ue_address, Gnb, GnbConfig};
use tcran_tc::{Change, Control, PipelineConfig, Refused};

const MS: u64 = 1_000_000;

/// UE 1 with downlink DRB 1 (the default FIFO) and uplink DRB 1 (RLC UM,
/// a 5-MB buffer, the default FIFO pipeline) in a 25-PRB cell at MCS 10,
/// as scenarios/uplink-backup.toml.
const CELL: &str = r#"
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 10 }
    [[ues.uplink_drbs]]
    rlc = { mode = "um", buffer_limit = "5MB" }
"#;

fn node() -> Gnb {
    toml::from_str::<GnbConfig>(CELL)
        .expect("config parses")
        .build(Path::new("."))
        .expect("config builds")
}

fn upload(id: u64, at: Instant) -> Packet {
    let tuple = FiveTuple {
        src: ue_address(Rnti(1)),
        dst: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
        sport: 40000,
        dport: 5201,
        proto: Protocol::TCP,
    };
    Packet::new(PacketId(id), 1500, tuple, at)
}

/// Runs the node to `until`, discarding its outputs.
fn run(gnb: &mut Gnb, until: Instant) {
    while let Some(t) = gnb.next_wakeup().filter(|t| *t <= until) {
        gnb.on_timeout(t);
        while gnb.poll_output().is_some() {}
    }
}

/// The scenario's cure: flow queues with CoDel, DRR, at most 20 kB in RLC.
fn cure() -> PipelineConfig {
    PipelineConfig::from_toml(
        r#"
        classifier = { kind = "flow_hash", buckets = 64 }
        scheduler = { kind = "drr" }
        pacer = { kind = "static", limit_bytes = "20kB" }
        [[queues]]
        id = 0
        count = 64
        kind = "codel"
        "#,
    )
    .expect("the cure parses")
}

#[test]
fn uplink_drbs_are_listed_apart_from_the_downlink_ones() {
    let gnb = node();
    let (mut down, mut up) = (Vec::new(), Vec::new());
    RanNode::drbs(&gnb, &mut down);
    gnb.uplink_drbs(&mut up);
    assert_eq!(down, vec![DrbKey::new(1, 1)]);
    assert_eq!(up, vec![DrbKey::uplink(1, 1)]);
    assert!(gnb.tc_view(DrbKey::uplink(1, 2), Instant::ZERO).is_none());
    // The KPM counters and the bearer view are the downlink's.
    assert!(gnb.kpm_drb(DrbKey::uplink(1, 1)).is_none());
    assert!(gnb.bearer(DrbKey::uplink(1, 1), Instant::ZERO).is_none());
}

/// A deploy addressed to uplink DRB 1 changes the UE's pipeline, not the
/// gNB's downlink DRB 1; a refused change changes nothing; a DRB the UE
/// does not have is refused as such.
#[test]
fn a_change_to_an_uplink_drb_reconfigures_the_ues_pipeline_only() {
    let mut gnb = node();
    let (up, down) = (DrbKey::uplink(1, 1), DrbKey::new(1, 1));
    let before_down = gnb.tc_view(down, Instant::ZERO).unwrap().config;
    let t = Instant::from_nanos(5 * MS);
    let applied = RanNode::apply(&mut gnb, up, &Change::Deploy(cure()), t).expect("applied");
    // The pipeline's configuration as it stands (defaults filled in).
    let cured = applied.config;
    assert_eq!(
        (&cured.pacer, &cured.scheduler),
        (&cure().pacer, &cure().scheduler)
    );
    assert_eq!(gnb.tc_view(up, t).unwrap().config, cured);
    assert_eq!(gnb.tc_view(down, t).unwrap().config, before_down);

    let bad = Change::Control(Control::DeleteQueue {
        id: tcran_core::QueueId(99),
    });
    assert!(RanNode::apply(&mut gnb, up, &bad, t).is_err());
    assert_eq!(gnb.tc_view(up, t).unwrap().config, cured, "nothing changed");
    assert_eq!(
        RanNode::apply(&mut gnb, DrbKey::uplink(1, 2), &Change::Deploy(cure()), t),
        Err(Refused::NoSuchDrb)
    );
    assert_eq!(
        RanNode::apply(&mut gnb, DrbKey::uplink(7, 1), &Change::Deploy(cure()), t),
        Err(Refused::NoSuchDrb)
    );
}

/// The uplink view reports the UE's own RLC buffer: with the default
/// FIFO every packet of a burst goes to RLC at once (the 5-MB buffer
/// holds them); a static pacer deployed over the control surface keeps
/// the UE's RLC at its 20 kB and the rest in the UE's pipeline.
#[test]
fn the_uplink_view_reports_the_ues_rlc_buffer_which_a_deployed_pacer_bounds() {
    for (deploy, rlc_at_most, queued_at_least) in [(false, 200_000, 0), (true, 20_500, 60)] {
        let mut gnb = node();
        let up = DrbKey::uplink(1, 1);
        if deploy {
            RanNode::apply(&mut gnb, up, &Change::Deploy(cure()), Instant::ZERO).expect("applied");
        }
        let t0 = Instant::from_nanos(MS);
        for i in 0..100 {
            gnb.uplink(Rnti(1), upload(i, t0), t0);
        }
        let until = t0 + Duration::from_millis(3);
        run(&mut gnb, until);
        let v = gnb.tc_view(up, until).unwrap();
        assert_eq!(v.stats.totals.in_packets, 100);
        // No grant yet (SR, DCI, K2): the UE's RLC holds what the
        // pipeline let go, headers included.
        let in_rlc = v.lower.rlc_backlog_bytes;
        assert!(in_rlc <= rlc_at_most, "deploy {deploy}: {in_rlc} B in RLC");
        assert!(in_rlc >= 18_000, "deploy {deploy}: {in_rlc} B in RLC");
        assert!(
            v.stats.totals.queued_packets >= queued_at_least,
            "deploy {deploy}: {} queued in the UE's pipeline",
            v.stats.totals.queued_packets
        );
        assert_eq!(v.lower.rlc_sojourn, until.saturating_since(t0));
    }
}
