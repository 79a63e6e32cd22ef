//! The UPF queue before SDAP (thesis ch. 3, second scenario: "USP@5G-BDP").

use crate::common;

use common::run;

/// A game and a CUBIC download share one SDAP buffer (one FIFO) paced by
/// 5G-BDP towards RLC.
const SHARED_SDAP: &str = r#"
    duration = "20s"
    warmup = "5s"
    seed = 1
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[ues.drbs]]
    id = 1
    [ues.drbs.pipeline]
    pacer = { kind = "bdp" }
    [[ues.drbs.pipeline.queues]]
    id = 0
    kind = "fifo"
    limit_packets = 100000
    [[flows]]
    name = "bulk"
    ue = 1
    kind = "tcp"
    tcp = { cc = "cubic" }
    [[flows]]
    name = "gaming"
    ue = 1
    kind = "gaming"
    mean = "20ms"
    start = "1s"
"#;

/// The UPF keeps a queue per class (game first) and USP releases only what
/// keeps the SDAP buffer "full, but not fuller".
const USP: &str = r#"
    [ues.upf.pipeline]
    default_queue = 1
    classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", queue = 0 } ] }
    scheduler = { kind = "priority" }
    pacer = { kind = "usp" }
    [[ues.upf.pipeline.queues]]
    id = 0
    kind = "fifo"
    [[ues.upf.pipeline.queues]]
    id = 1
    kind = "fifo"
    priority = 1
    limit_packets = 100000
"#;

#[test]
fn usp_at_the_upf_keeps_the_shared_sdap_buffer_short() {
    let plain = run(SHARED_SDAP);
    let usp = run(&SHARED_SDAP.replace(
        "    [[flows]]\n    name = \"bulk\"",
        &format!("{USP}\n    [[flows]]\n    name = \"bulk\""),
    ));
    let (p, u) = (&plain.flows[1], &usp.flows[1]);
    // Without the UPF queue the game waits behind the download in the
    // shared SDAP FIFO (CUBIC fills it: the pacer holds the excess there).
    assert!(p.layers_ms.tc.mean > 100.0, "{:?}", p.layers_ms);
    assert_eq!(p.layers_ms.upf.max, 0.0);
    // With USP the SDAP buffer holds about a TTI's worth and the game
    // overtakes the download at the UPF.
    assert!(
        u.layers_ms.tc.mean + u.layers_ms.upf.mean < 10.0,
        "{:?}",
        u.layers_ms
    );
    assert!(
        u.delay_ms.mean * 5.0 < p.delay_ms.mean,
        "{} vs {}",
        u.delay_ms.mean,
        p.delay_ms.mean
    );
    // The download's backlog moved up to the UPF, and the link stays used.
    assert!(
        usp.flows[0].layers_ms.upf.mean > 10.0,
        "{:?}",
        usp.flows[0].layers_ms
    );
    assert!(usp.prb_utilization > 0.95, "{}", usp.prb_utilization);
}

#[test]
fn a_full_upf_queue_drops_at_layer_upf() {
    let small = USP.replace("limit_packets = 100000", "limit_packets = 20");
    let s = run(&SHARED_SDAP.replace(
        "    [[flows]]\n    name = \"bulk\"",
        &format!("{small}\n    [[flows]]\n    name = \"bulk\""),
    ));
    assert!(s.drops["upf"]["queue_full"] > 0, "{:?}", s.drops);
    assert!(!s.drops.contains_key("tc"), "{:?}", s.drops);
}
