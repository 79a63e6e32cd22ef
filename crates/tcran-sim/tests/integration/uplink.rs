//! The uplink scheduling-request / grant model (scenario `[uplink]`): ping
//! round trips worked out by hand, and nothing changes while it is off.

use crate::common;

use common::run;
use std::path::Path;
use tcran_sim::{RunSummary, Sim, SimConfig};

/// The no-load ping of tests/integration/engine.rs (RTT 25 ms without the model).
const PING: &str = r#"
    duration = "3s"
    warmup = "1s"
    UPLINK
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
    [[flows]]
    name = "ping"
    ue = 1
    start_jitter = "0s"
    kind = "ping"
    interval = "100ms"
"#;

fn rtt(s: &RunSummary) -> (u64, f64, f64) {
    let r = s.flows[0].rtt_ms.expect("ping reports rtt");
    (r.count, r.p50, r.max)
}

/// FDD, 1-ms slots, SR every 20 slots; UE 1's occasions are the slots s
/// with (s - 1) mod 20 = 0, i.e. at 1, 21, 41, ... ms past every 100 ms.
/// A request sent at t = 100k ms reaches the UE at t + 11 (core 10, one
/// slot); the reply waits for the occasion at t + 21 (10 ms), then the
/// 4-ms grant delay, then ul_delay 4 and the core 10: RTT = 21 + 4 + 4 +
/// 10 = 39 ms = 25 + 10 (SR wait) + 4 (grant).
#[test]
fn no_load_ping_rtt_grows_by_the_sr_wait_and_the_grant_delay() {
    let s = run(&PING.replace(
        "UPLINK",
        "uplink = { sr_period = \"20ms\", grant_delay = \"4ms\" }",
    ));
    assert_eq!(rtt(&s), (20, 39.0, 39.0));
    // An occasion right when the reply is ready: no SR wait, only the
    // grant (occasions every 10 ms at 1, 11, 21, ...).
    let s = run(&PING.replace(
        "UPLINK",
        "uplink = { sr_period = \"10ms\", grant_delay = \"4ms\" }",
    ));
    assert_eq!(rtt(&s), (20, 29.0, 29.0));
    // Without an SR period a request goes at once: the grant delay only.
    let s = run(&PING.replace("UPLINK", "uplink = { grant_delay = \"6ms\" }"));
    assert_eq!(rtt(&s), (20, 31.0, 31.0));
}

/// TDD DDDSU at 30 kHz (0.5-ms slots), SR every 10 slots (5 ms): UE 1's
/// occasions at 0.5 + 5k ms. The request reaches the gNB at t + 10 (slot
/// 2t + 20, a D slot) and the UE at t + 10.5, right on an occasion; the
/// grant comes 2 ms later, at t + 12.5 = slot 2t + 25, a D slot, so the
/// reply waits for the next U slot, 2t + 29 (t + 14.5), then ul_delay 4
/// and the core 10: RTT = 28.5 ms, against 10 + 0.5 + 4 + 10 = 24.5 ms
/// without the model.
#[test]
fn tdd_uplink_waits_for_a_u_slot() {
    let tdd = PING.replace(
        "bandwidth_mhz = 5",
        "bandwidth_mhz = 20\n    numerology = 1\n    slot_pattern = \"DDDSU\"",
    );
    assert_eq!(rtt(&run(&tdd.replace("UPLINK", ""))), (20, 24.5, 24.5));
    let s = run(&tdd.replace(
        "UPLINK",
        "uplink = { sr_period = \"5ms\", grant_delay = \"2ms\" }",
    ));
    assert_eq!(rtt(&s), (20, 28.5, 28.5));
}

/// Off is today's behaviour exactly: an empty `[uplink]` table gives the
/// same summary as none, and the no-load RTT stays 25 ms.
#[test]
fn with_the_model_off_nothing_changes() {
    let absent = run(&PING.replace("UPLINK", ""));
    let empty = run(&PING.replace("UPLINK", "uplink = {}"));
    assert_eq!(absent, empty);
    assert_eq!(rtt(&absent), (20, 25.0, 25.0));
    let bulk = r#"
        duration = "6s"
        warmup = "2s"
        seed = 4
        UPLINK
        [cell]
        bandwidth_mhz = 5
        bler = 0.1
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 20 }
        [[flows]]
        name = "bulk"
        ue = 1
        start_jitter = "0s"
        kind = "tcp"
        [[flows]]
        name = "voip"
        ue = 1
        start_jitter = "0s"
        kind = "voip"
    "#;
    assert_eq!(
        run(&bulk.replace("UPLINK", "")),
        run(&bulk.replace("UPLINK", "uplink = { grant_delay = \"0ms\" }"))
    );
    // On, a download over RLC AM still fills the link: ACKs and status
    // PDUs go up in batches at the grants.
    let on = run(&bulk.replace("bler = 0.1", "").replace(
        "UPLINK",
        "uplink = { sr_period = \"10ms\", grant_delay = \"4ms\" }",
    ));
    assert!(on.prb_utilization > 0.95, "{}", on.prb_utilization);
    let p = on.packets;
    assert_eq!(p.created, p.delivered + p.dropped + p.in_flight);
}

#[test]
fn bad_uplink_settings_are_refused_naming_the_field() {
    let err = |uplink: &str| {
        let cfg: SimConfig = toml::from_str(&PING.replace("UPLINK", uplink)).unwrap();
        Sim::new(&cfg, Path::new("."))
            .expect_err("refused")
            .to_string()
    };
    assert_eq!(
        err("uplink = { sr_period = \"1500us\" }"),
        "uplink.sr_period = 1500us: must be a whole number of slots (1ms each) from 1 to 640 slots"
    );
    assert!(err("uplink = { sr_period = \"0ms\" }").starts_with("uplink.sr_period = 0ms:"));
    assert!(err("uplink = { sr_period = \"641ms\" }").starts_with("uplink.sr_period = 641ms:"));
    assert_eq!(
        err("uplink = { grant_delay = \"200ms\" }"),
        "uplink.grant_delay = 200ms: must be in 0ms..=100ms"
    );
}
