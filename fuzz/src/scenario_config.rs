//! Body of the `scenario_config` fuzz target: arbitrary text as a scenario
//! file (TOML), through the serde types, the builder of its first
//! [`MAX_VARIANTS`] variants and, when they build, a short run of each.
//!
//! Also compiled into `crates/tcran-sim/tests/integration/fuzz_scenario.rs` with
//! `#[path = "../../../fuzz/src/scenario_config.rs"]`, so it may only use
//! `tcran_sim`, `tcran_core` and `toml`.
//!
//! The simulator stays sans-IO here: a channel trace must be one of the
//! traces built into tcran (`builtin:NAME`, as every shipped scenario
//! uses); an input naming a trace file is skipped rather than letting the
//! fuzzer read files of this machine (the trace readers have their own
//! target, `channel_trace`).
//!
//! Invariants (a violation panics, which the fuzzer reports as a crash):
//! - Parsing and building never panic; a scenario that parses but does
//!   not build is an error with a message.
//! - A scenario that builds runs (cut to [`MAX_RUN`] of simulated time)
//!   without panicking, and its summary is coherent: finite non-negative
//!   numbers, utilisation within 0..=1, ordered percentiles, and every
//!   downlink packet created is delivered, dropped (each drop counted under
//!   a layer and a reason) or found on its way by the ledger, overall and
//!   for every flow.

use std::path::Path;
use tcran_core::Duration;
use tcran_sim::metrics::DelaySummary;
use tcran_sim::scenario::ChannelConfig;
use tcran_sim::{RunSummary, SimConfig};

/// The longest simulated time a fuzz input runs: 200 ms is several round
/// trips (TCP in slow start, one CoDel interval, pacers and controllers
/// acting on real reports), while a fuzzer needs many inputs a second: a
/// shipped scenario costs about 14 ms at 200 ms against 86 ms at 1.5 s
/// (release build, no sanitizer; docs/performance.md has the exec/s).
pub const MAX_RUN: Duration = Duration::from_millis(200);

/// The most variants of one input that are built and run.
pub const MAX_VARIANTS: usize = 4;

/// Entry point: `data` as the text of a scenario file. Returns how many
/// runs (variants) it simulated: 0 for an input refused or skipped.
pub fn fuzz_scenario_config(data: &[u8]) -> usize {
    let Ok(text) = std::str::from_utf8(data) else {
        return 0;
    };
    // A parse error is the CLI's to word (it fills in the few messages
    // the toml crate leaves empty); here it only must not panic.
    let Ok(mut cfg) = toml::from_str::<SimConfig>(text) else {
        return 0;
    };
    let reads_file = |c: &ChannelConfig| matches!(c, ChannelConfig::Trace { path, .. } if !path.starts_with("builtin:"));
    let reads_files = cfg
        .ues
        .iter()
        .any(|ue| reads_file(&ue.channel) || ue.uplink_channel.as_ref().is_some_and(reads_file));
    if reads_files {
        return 0;
    }
    // Bound the cost of one input: a big cell of many UEs is the scale
    // scenario's business, not the fuzzer's.
    if cfg.ues.len() > 8 || cfg.flows.len() > 32 || cfg.variants.len() > 32 {
        return 0;
    }
    // Shipped scenarios compare up to 18 variants: building and running
    // every one made an input cost seconds under the sanitizer. The first
    // MAX_VARIANTS exercise the variant machinery as well.
    cfg.variants.truncate(MAX_VARIANTS);
    // The paper numbers of the variants dropped go with them.
    let kept = |name: &String| cfg.variants.iter().any(|v| &v.name == name);
    let paper: Vec<_> = (cfg.paper.iter())
        .filter(|p| kept(&p.variant) && p.relative_to.as_ref().is_none_or(kept))
        .cloned()
        .collect();
    cfg.paper = paper;
    // So do the explanations of orderings that no longer have two variants.
    let gaps: Vec<_> = (cfg.ordering_gaps.iter())
        .filter(|g| g.names_a_group_of(&cfg.paper))
        .cloned()
        .collect();
    cfg.ordering_gaps = gaps;
    if cfg.duration > MAX_RUN {
        // Shrink the warm-up and the event times in proportion, so that a
        // scenario valid as written stays valid (and an invalid one stays
        // invalid) and its events still happen.
        let full = cfg.duration;
        let scale = |d: Duration| {
            let ns = u128::from(d.as_nanos()) * u128::from(MAX_RUN.as_nanos())
                / u128::from(full.as_nanos());
            Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
        };
        cfg.warmup = scale(cfg.warmup);
        for e in cfg
            .events
            .iter_mut()
            .chain(cfg.variants.iter_mut().flat_map(|v| v.events.iter_mut()))
        {
            e.at = scale(e.at);
        }
        cfg.duration = MAX_RUN;
    }

    let sims = match tcran_sim::build_scenario(&cfg, Path::new("/nonexistent")) {
        Ok(sims) => sims,
        Err(e) => {
            assert!(
                !e.to_string().is_empty(),
                "a build error says what is wrong"
            );
            return 0;
        }
    };
    let runs = sims.len();
    for (name, sim) in sims {
        let out = sim.run();
        check_summary(&name, &out.summary);
    }
    runs
}

fn check_summary(variant: &str, s: &RunSummary) {
    let ctx = |what: &str| format!("variant {variant}: {what}");
    assert!(
        (0.0..=1.0 + 1e-9).contains(&s.prb_utilization),
        "{}",
        ctx(&format!("PRB utilisation {}", s.prb_utilization))
    );
    assert!(
        s.rlc.mean_bytes.is_finite() && s.rlc.mean_bytes >= 0.0,
        "{}",
        ctx("RLC mean bytes")
    );
    assert!(
        s.rlc.mean_bytes <= s.rlc.max_bytes as f64 + 1e-6,
        "{}",
        ctx("RLC mean above its max")
    );
    for f in &s.flows {
        assert!(
            f.throughput_mbps.is_finite() && f.throughput_mbps >= 0.0,
            "{}",
            ctx(&format!("flow {} throughput", f.name))
        );
        check_delays(&ctx(&format!("flow {} delay", f.name)), &f.delay_ms);
        for (layer, d) in [
            ("core", &f.layers_ms.core),
            ("upf", &f.layers_ms.upf),
            ("tc", &f.layers_ms.tc),
            ("rlc", &f.layers_ms.rlc),
            ("air", &f.layers_ms.air),
        ] {
            check_delays(&ctx(&format!("flow {} layer {layer}", f.name)), d);
        }
    }
    // The ledger: every downlink packet created is delivered, dropped with
    // a counted reason or found somewhere on its way; overall and per flow.
    let p = &s.packets;
    assert_eq!(
        p.unaccounted,
        0,
        "{}",
        ctx(&format!("packets lost track of: {p:?}"))
    );
    assert_eq!(
        p.created,
        p.delivered + p.dropped + p.in_flight,
        "{}",
        ctx(&format!("packets not conserved: {p:?}"))
    );
    assert_eq!(
        p.in_flight,
        p.in_flight_by_place.total(),
        "{}",
        ctx("in flight by place")
    );
    let counted_drops: u64 = s
        .drops
        .values()
        .flat_map(|by_reason| by_reason.values())
        .sum();
    assert_eq!(
        p.dropped,
        counted_drops,
        "{}",
        ctx("drops without a layer and reason")
    );
    for f in &s.flows {
        assert_eq!(
            f.created_packets,
            f.delivered_packets + f.lost_packets + f.in_flight_packets,
            "{}",
            ctx(&format!("flow {} not conserved", f.name))
        );
    }
    let sum = |g: fn(&tcran_sim::report::FlowSummary) -> u64| s.flows.iter().map(g).sum::<u64>();
    assert_eq!(
        sum(|f| f.created_packets),
        p.created,
        "{}",
        ctx("flows' created")
    );
    assert_eq!(
        sum(|f| f.lost_packets),
        p.dropped,
        "{}",
        ctx("flows' losses")
    );
    assert_eq!(
        sum(|f| f.in_flight_packets),
        p.in_flight,
        "{}",
        ctx("flows' in flight")
    );
}

fn check_delays(ctx: &str, d: &DelaySummary) {
    let all = [d.mean, d.p50, d.p95, d.p99, d.max];
    assert!(
        all.iter().all(|v| v.is_finite() && *v >= 0.0),
        "{ctx}: {d:?}"
    );
    // Percentiles are samples of the distribution, in order; the mean lies
    // within it (up to float rounding of the sum).
    assert!(
        d.p50 <= d.p95 && d.p95 <= d.p99 && d.p99 <= d.max,
        "{ctx}: {d:?}"
    );
    assert!(d.mean <= d.max * (1.0 + 1e-9) + 1e-9, "{ctx}: {d:?}");
}
