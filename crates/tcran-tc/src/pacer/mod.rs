//! Pacers (TC-RAN stage 6): keep the RLC buffer full, but not fuller
//! (thesis-irazabal-5g-qos.txt ch. 3; Kumar et al., kumar-dynamic-rlc-buffer.txt).
//!
//! | kind | rule | source |
//! |---|---|---|
//! | `none` | everything goes down at once | 3GPP baseline |
//! | `static` | fixed RLC byte and/or SDU limit | Kumar Fig. 2 (16..96 SDUs) |
//! | `drql` | byte limit grown on starvation, shrunk by the standing backlog, per TTI report | thesis Alg. 1 |
//! | `dql` | Linux `lib/dynamic_queue_limits.c` (BQL) driven by forwards and per-TTI pulls | algorithms.md §1.8 |
//! | `dynrlc` | SDU limit QLT steered by the SDU sojourn (DLM) against a threshold (DLT) | Kumar Alg. 1 |
//! | `bdp` | 5G-BDP: forward `(elapsed/TTI + offset) x (grant - backlog)` per TTI | thesis Alg. 2 |
//! | `e5g_bdp` | enhanced 5G-BDP: EWMA bandwidth, size-aware paced bytes | thesis Alg. 3-5 |
//! | `jit` | keep in RLC what the next slot will carry: the smallest target that would have left at most `unused_share` of the last slots' capacity (same TDD phase) unused; the packet that overfills it goes down just before the pull | docs/pacer.md (ours) |
//! | `usp` | UPF->SDAP pacer: keep the queue below at a measured optimal occupancy | thesis Alg. 6-7 |
//! | `plugin` | the application's code ([`crate::plugin`]) | TC-RAN sec. IV-C |
//!
//! Contract common to every pacer (the driver is [`crate::pipeline::Pipeline`]):
//! - `admits(len, now, lower)` is asked for the scheduler's candidate; a
//!   refusal is counted (`PacerStats::refused`) and remembered, so that
//!   [`Pacer::next_wakeup`] can say when that same candidate would pass if the
//!   pacer changes its mind with time alone (5G-BDP, e5G-BDP, USP); pacers
//!   that only change on events return `None`.
//! - `on_forwarded` follows every admitted packet that actually went down.
//! - `on_report` arrives once per TTI with downlink, right after the MAC
//!   pulled; every pacer gets the same [`LowerLayerReport`] (its docs),
//!   and each pacer's module doc says which of its fields it reads.
//! - No clock, no hash map, no allocation after `build()`.
//!
//! Each config is serde, kind-tagged in [`PacerConfig`], rejects unknown
//! keys, writes units (`"1ms"`, `"1500B"`) and validates every value in
//! `build()` with a [`ConfigError`] naming the field.

mod bdp;
mod dql;
mod drql;
mod dynrlc;
mod e5g_bdp;
mod jit;
mod static_limit;
mod usp;

#[cfg(test)]
pub(crate) mod testing;

pub use bdp::{Bdp, BdpConfig};
pub use dql::{Dql, DqlConfig, DQL_MAX_LIMIT};
pub use drql::{Drql, DrqlConfig};
pub use dynrlc::{DynRlc, DynRlcConfig};
pub use e5g_bdp::{BandwidthSource, E5gBdp, E5gBdpConfig};
pub use jit::{Jit, JitConfig};
pub use static_limit::{StaticConfig, StaticLimit};
pub use usp::{Usp, UspConfig};

use crate::plugin::{no_resolver, PluginConfig, Resolver};
use crate::stage::{LowerLayerReport, LowerState, Pacer, PacerStats};
use serde::{Deserialize, Serialize};
use tcran_core::{ConfigError, Duration, Instant};

/// TTI assumed until the first report says otherwise: 1 ms, the LTE TTI and
/// the 5G slot at 15 kHz, "the lowest common denominator" (thesis sec. 3.4).
pub const DEFAULT_TTI: Duration = Duration::from_millis(1);

/// IP MTU of the bearer (Ethernet-sized, thesis sec. 3.4: "MTU of 1500 bytes").
pub const DEFAULT_MTU: u32 = 1500;

/// The thesis expresses MAX_VAL_LIMIT (DRQL) and MAX_OCC (USP) as 1024
/// packets (sec. 3.6.1); in bytes that is 1024 MTU-sized packets.
pub const MAX_1024_PACKETS: u64 = 1024 * DEFAULT_MTU as u64;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PacerConfig {
    /// No pacing: everything goes down at once (3GPP baseline).
    #[default]
    None,
    /// Fixed RLC byte and/or SDU limit.
    Static(StaticConfig),
    /// Dynamic RLC Queue Limit, thesis Alg. 1.
    Drql(DrqlConfig),
    /// Linux dynamic queue limits (BQL), faithful port.
    Dql(DqlConfig),
    /// Kumar et al. Alg. 1 (dynamic RLC buffer size in SDUs).
    Dynrlc(DynRlcConfig),
    /// 5G-BDP, thesis Alg. 2.
    Bdp(BdpConfig),
    /// Enhanced 5G-BDP, thesis Alg. 3-5.
    E5gBdp(E5gBdpConfig),
    /// UPF-SDAP pacer, thesis Alg. 6-7.
    Usp(UspConfig),
    /// Just-in-time grant pacer (docs/pacer.md).
    Jit(JitConfig),
    /// A pacer written in C and loaded through the C library (docs/c-api.md).
    // See `crate::plugin`; boxed, so that the rarely used variant does not
    // grow every config.
    Plugin(Box<PluginConfig>),
}

impl PacerConfig {
    pub fn kind_name(&self) -> &'static str {
        match self {
            PacerConfig::None => "none",
            PacerConfig::Static(_) => "static",
            PacerConfig::Drql(_) => "drql",
            PacerConfig::Dql(_) => "dql",
            PacerConfig::Dynrlc(_) => "dynrlc",
            PacerConfig::Bdp(_) => "bdp",
            PacerConfig::E5gBdp(_) => "e5g_bdp",
            PacerConfig::Usp(_) => "usp",
            PacerConfig::Jit(_) => "jit",
            PacerConfig::Plugin(_) => "plugin",
        }
    }

    /// Validates every value and builds a built-in pacer; a plug-in needs
    /// [`Self::build_with`].
    pub fn build(&self) -> Result<AnyPacer, ConfigError> {
        self.build_with(None)
    }

    /// Builds the pacer, resolving a plug-in with `plugins`.
    pub fn build_with(&self, plugins: Resolver<'_>) -> Result<AnyPacer, ConfigError> {
        Ok(match self {
            PacerConfig::None => AnyPacer::None,
            PacerConfig::Static(c) => AnyPacer::Static(c.build()?),
            PacerConfig::Drql(c) => AnyPacer::Drql(c.build()?),
            PacerConfig::Dql(c) => AnyPacer::Dql(c.build()?),
            PacerConfig::Dynrlc(c) => AnyPacer::Dynrlc(c.build()?),
            PacerConfig::Bdp(c) => AnyPacer::Bdp(c.build()?),
            PacerConfig::E5gBdp(c) => AnyPacer::E5gBdp(c.build()?),
            PacerConfig::Usp(c) => AnyPacer::Usp(c.build()?),
            PacerConfig::Jit(c) => AnyPacer::Jit(c.build()?),
            PacerConfig::Plugin(c) => match plugins {
                Some(r) => AnyPacer::Custom(r.pacer(c)?),
                None => return Err(no_resolver(c)),
            },
        })
    }
}

/// Every built-in pacer, plus plug-ins.
#[derive(Debug)]
pub enum AnyPacer {
    None,
    Static(StaticLimit),
    Drql(Drql),
    Dql(Dql),
    Dynrlc(DynRlc),
    Bdp(Bdp),
    E5gBdp(E5gBdp),
    Usp(Usp),
    Jit(Jit),
    Custom(Box<dyn Pacer>),
}

/// Dispatches to the pacer inside; `$none` is the expression for `None`.
macro_rules! fwd {
    ($self:ident, $p:ident => $e:expr, none => $none:expr) => {
        match $self {
            AnyPacer::None => $none,
            AnyPacer::Static($p) => $e,
            AnyPacer::Drql($p) => $e,
            AnyPacer::Dql($p) => $e,
            AnyPacer::Dynrlc($p) => $e,
            AnyPacer::Bdp($p) => $e,
            AnyPacer::E5gBdp($p) => $e,
            AnyPacer::Usp($p) => $e,
            AnyPacer::Jit($p) => $e,
            AnyPacer::Custom($p) => $e,
        }
    };
}

impl Pacer for AnyPacer {
    fn admits(&mut self, len: u32, now: Instant, lower: &LowerState) -> bool {
        fwd!(self, p => p.admits(len, now, lower), none => true)
    }
    fn on_forwarded(&mut self, len: u32, now: Instant) {
        fwd!(self, p => p.on_forwarded(len, now), none => ())
    }
    fn on_report(&mut self, report: &LowerLayerReport, now: Instant) {
        fwd!(self, p => p.on_report(report, now), none => ())
    }
    fn on_sdu_departed(&mut self, sojourn: Duration, now: Instant) {
        fwd!(self, p => p.on_sdu_departed(sojourn, now), none => ())
    }
    fn on_status_pdu(&mut self, now: Instant) {
        fwd!(self, p => p.on_status_pdu(now), none => ())
    }
    fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        fwd!(self, p => p.next_wakeup(now), none => None)
    }
    fn wants_every_slot(&self) -> bool {
        fwd!(self, p => p.wants_every_slot(), none => false)
    }
    fn stats(&self) -> PacerStats {
        fwd!(self, p => p.stats(), none => PacerStats::default())
    }
}

// ------------------------------------------------------------ shared helpers

/// Bandwidth estimate for the statistics of pacers that do not estimate it
/// themselves: an EWMA (gain 1/8, as RFC 6298's SRTT) of the bytes the MAC
/// pulled per second, seeded by the first report.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PulledRate {
    bytes_per_sec: Option<f64>,
}

impl PulledRate {
    const GAIN: f64 = 0.125;

    pub(crate) fn update(&mut self, report: &LowerLayerReport) {
        if report.tti.is_zero() {
            return;
        }
        let sample = report.pulled_bytes as f64 / report.tti.as_secs_f64();
        self.bytes_per_sec = Some(match self.bytes_per_sec {
            None => sample,
            Some(b) => b + Self::GAIN * (sample - b),
        });
    }

    pub(crate) fn get(&self) -> f64 {
        self.bytes_per_sec.unwrap_or(0.0)
    }
}

/// The TTI of the last report, or [`DEFAULT_TTI`] before the first one (a
/// report with a zero `tti` keeps the previous value).
pub(crate) fn tti_of(report: &LowerLayerReport, previous: Duration) -> Duration {
    if report.tti.is_zero() {
        previous
    } else {
        report.tti
    }
}

/// Time from the report to the next MAC pull: `next_pull_in`, or the
/// report's TTI (`previous` before any) when the report does not say.
pub(crate) fn pull_gap(report: &LowerLayerReport, previous: Duration) -> Duration {
    if report.next_pull_in.is_zero() {
        tti_of(report, previous)
    } else {
        report.next_pull_in
    }
}

/// The earliest instant `>= from` at which `pass(t)` holds, probing a few
/// nanoseconds after `from` to absorb floating-point rounding in the
/// analytic crossing time. Falls back to `from` (the caller will simply ask
/// again) if the predicate still fails.
pub(crate) fn settle(from: Instant, pass: impl Fn(Instant) -> bool) -> Instant {
    let mut t = from;
    for _ in 0..8 {
        if pass(t) {
            return t;
        }
        t += Duration::from_nanos(1);
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report from outside Rust closes a slot of 1 us to 1 s (TS 38.211
    /// Table 4.3.2-1: 15.6 us at numerology 6 up to 1 ms, MAC periods of
    /// tens of ms) and knows its next pull at most 1 s ahead.
    #[test]
    fn a_report_from_a_binding_has_a_slot_of_1us_to_1s() {
        let at = |tti_ns: u64, next_ns: u64| {
            LowerLayerReport {
                tti: Duration::from_nanos(tti_ns),
                next_pull_in: Duration::from_nanos(next_ns),
                ..LowerLayerReport::default()
            }
            .check()
            .map_err(|e| e.to_string())
        };
        assert_eq!(at(15_625, 0), Ok(()));
        assert_eq!(at(1_000_000_000, 1_000_000_000), Ok(()));
        assert_eq!(
            at(0, 0),
            Err("tti_ns = 0: must be 1000..=1000000000 (1 us to 1 s)".into())
        );
        assert!(at(999, 0).is_err() && at(1_000_000_001, 0).is_err());
        assert_eq!(
            at(1_000_000, 1_000_000_001),
            Err(
                "next_pull_in_ns = 1000000001: must be 0 (not known) or at most 1000000000 (1 s)"
                    .into()
            )
        );
        let mcs = |mcs| {
            LowerLayerReport {
                tti: Duration::from_millis(1),
                mcs,
                ..LowerLayerReport::default()
            }
            .check()
            .map_err(|e| e.to_string())
        };
        assert_eq!(mcs(None), Ok(()));
        assert_eq!(mcs(Some(31)), Ok(()));
        assert_eq!(
            mcs(Some(32)),
            Err(
                "mcs = 32: must be 0..=31 (the 5-bit MCS index of DCI 1_1, TS 38.214 §5.1.3.1)"
                    .into()
            )
        );
    }

    /// Pacers read only what a real gNB reports: the report every pacer
    /// gets is destructured here field by field, each with where a real
    /// MAC or RLC has it, so a field added to it (a channel model's state,
    /// a look-ahead) does not compile until it is listed here with a
    /// source in a real stack, or not added.
    #[test]
    fn the_report_holds_only_what_a_real_mac_and_rlc_know() {
        let LowerLayerReport {
            tti,
            next_pull_in,
            pulls_per_pattern,
            backlog_bytes,
            backlog_sdus,
            pulled_bytes,
            granted_bytes,
            max_bytes,
            head_of_line_age,
            mcs,
            prbs,
            harq_acks,
            harq_nacks,
        } = LowerLayerReport::default();
        let sources = [
            ("tti", tti.as_nanos(), "the numerology's slot or the MAC's scheduling period (TS 38.211 §4.3.2)"),
            ("next_pull_in", next_pull_in.as_nanos(), "the TDD pattern the cell configures (TS 38.331 TDD-UL-DL-ConfigCommon)"),
            ("pulls_per_pattern", pulls_per_pattern.into(), "the same TDD pattern"),
            ("backlog_bytes", backlog_bytes, "the RLC buffer status the MAC reads (TS 38.322 §5.2; F1-U DDDS, TS 38.425 §5.5.2.2)"),
            ("backlog_sdus", backlog_sdus.into(), "the RLC entity's SDU queue"),
            ("pulled_bytes", pulled_bytes, "what the MAC took from this logical channel (TS 38.321 §5.4.3.1)"),
            ("granted_bytes", granted_bytes, "the grant's TBS share for this logical channel (TS 38.214 §5.1.3.2)"),
            ("max_bytes", max_bytes, "the TBS of every PRB at the scheduled MCS (TS 38.214 §5.1.3.2)"),
            ("head_of_line_age", head_of_line_age.as_nanos(), "the arrival time the RLC entity keeps per SDU (TS 38.322 §5.2.3.1)"),
            ("mcs", mcs.map_or(0, u64::from), "link adaptation's choice for the grant (TS 38.214 §5.1.3.1, DCI 1_1)"),
            ("prbs", prbs.into(), "the grant's frequency-domain allocation (TS 38.214 §5.1.2.2)"),
            ("harq_acks", harq_acks.into(), "the UE's HARQ-ACK feedback (TS 38.321 §5.3.2, TS 38.213 §9)"),
            ("harq_nacks", harq_nacks.into(), "the same feedback, negative"),
        ];
        assert_eq!(sources.len(), 13);
        assert!(
            sources.iter().all(|(_, v, _)| *v == 0),
            "the default report is empty"
        );
    }

    fn parse(text: &str) -> Result<PacerConfig, toml::de::Error> {
        #[derive(Deserialize)]
        struct W {
            pacer: PacerConfig,
        }
        toml::from_str::<W>(text).map(|w| w.pacer)
    }

    #[test]
    fn every_kind_parses_with_defaults_and_builds() {
        for kind in [
            "none", "static", "drql", "dql", "dynrlc", "bdp", "e5g_bdp", "usp", "jit",
        ] {
            let text = if kind == "static" {
                "pacer = { kind = \"static\", limit_sdus = 32 }".to_string()
            } else {
                format!("pacer = {{ kind = \"{kind}\" }}")
            };
            let c = parse(&text).unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(c.kind_name(), kind);
            c.build().unwrap_or_else(|e| panic!("{kind}: {e}"));
        }
    }

    #[test]
    fn units_are_spelled_out_and_unknown_keys_rejected() {
        let c = parse(
            r#"pacer = { kind = "dynrlc", interval = "100ms", dlt = "11ms", alpha = 0.1, qlt_min = 16, qlt_max = 96 }"#,
        )
        .unwrap();
        assert!(matches!(c, PacerConfig::Dynrlc(_)));
        assert!(parse(r#"pacer = { kind = "bdp", offst = 0.33 }"#).is_err());
        assert!(parse(r#"pacer = { kind = "dql", hold_time = 1000 }"#).is_err());
        assert!(parse(r#"pacer = { kind = "static", limit_bytes = "9000B" }"#).is_ok());
    }

    #[test]
    fn configs_round_trip_through_toml() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct W {
            pacer: PacerConfig,
        }
        let all = [
            PacerConfig::None,
            PacerConfig::Static(StaticConfig {
                limit_bytes: Some(tcran_core::ByteSize(48_000)),
                limit_sdus: Some(32),
            }),
            PacerConfig::Drql(DrqlConfig {
                interval: Some(Duration::from_millis(2)),
                ..DrqlConfig::default()
            }),
            PacerConfig::Dql(DqlConfig::default()),
            PacerConfig::Dynrlc(DynRlcConfig {
                dlt_beta: Some(1.75),
                ..DynRlcConfig::default()
            }),
            PacerConfig::Bdp(BdpConfig::default()),
            PacerConfig::E5gBdp(E5gBdpConfig {
                bandwidth_from: BandwidthSource::Inferred,
                ..E5gBdpConfig::default()
            }),
            PacerConfig::Usp(UspConfig::default()),
            PacerConfig::Jit(JitConfig {
                window: 4,
                unused_share: 0.1,
                lead: 0.1,
                mtu: tcran_core::ByteSize(9000),
                hold: false,
            }),
        ];
        for pacer in all {
            let w = W { pacer };
            let text = toml::to_string(&w).unwrap();
            let back: W = toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(back, w, "{text}");
        }
    }

    #[test]
    fn build_errors_name_field_value_and_range() {
        let e = parse(r#"pacer = { kind = "bdp", offset = 1.5 }"#)
            .unwrap()
            .build()
            .unwrap_err();
        assert_eq!(e.field, "offset");
        assert_eq!(e.value, "1.5");
        let e = parse(r#"pacer = { kind = "e5g_bdp", reduce_const = 0.0 }"#)
            .unwrap()
            .build()
            .unwrap_err();
        assert_eq!(e.field, "reduce_const");
        let e = parse(r#"pacer = { kind = "dynrlc", qlt_min = 100, qlt_max = 50 }"#)
            .unwrap()
            .build()
            .unwrap_err();
        assert_eq!(e.field, "qlt_max");
        let e = parse(r#"pacer = { kind = "static" }"#)
            .unwrap()
            .build()
            .unwrap_err();
        assert_eq!(e.field, "limit_bytes");
    }

    /// Every pacer inside a real [`crate::Pipeline`] (FIFO, round robin):
    /// the pipeline's own `LowerState` accounting, sub-TTI pulls, the MAC
    /// pulling 7700 B per 1-ms TTI from a greedy 1500-B source offering
    /// twice that. The RLC stays bounded and the MAC fed.
    #[test]
    fn every_pacer_inside_a_pipeline_keeps_rlc_bounded() {
        use std::collections::VecDeque;
        use tcran_core::{FiveTuple, Packet, PacketId};
        let kinds = [
            ("static", "limit_bytes = \"16kB\"", 0.0),
            ("drql", "", 0.03),
            ("dql", "", 0.0),
            (
                "dynrlc",
                "qlt_min = 4, qlt_max = 256, interval = \"100ms\"",
                0.0,
            ),
            ("bdp", "", 0.0),
            ("e5g_bdp", "", 0.0),
            ("usp", "", 0.0),
            ("jit", "", 0.0),
        ];
        const C: u64 = 7700;
        let tti = Duration::from_millis(1);
        for (kind, extra, max_waste) in kinds {
            let sep = if extra.is_empty() { "" } else { ", " };
            let text = format!(
                "pacer = {{ kind = \"{kind}\"{sep}{extra} }}\n[[queues]]\nid = 0\nkind = \"fifo\"\nlimit_packets = 200\n"
            );
            let cfg: crate::PipelineConfig = toml::from_str(&text).unwrap();
            let mut p = cfg.build().unwrap();
            let mut rlc: VecDeque<(u32, Instant)> = VecDeque::new();
            let (mut id, mut now) = (0u64, Instant::ZERO);
            let (mut worst, mut wasted) = (0u64, 0u64);
            let ttis = 6000;
            for n in 0..ttis {
                for k in 0..10u64 {
                    let t = now + Duration::from_micros(100 * k);
                    for _ in 0..2 {
                        id += 1;
                        p.push(Packet::new(PacketId(id), 1500, FiveTuple::default(), t), t);
                    }
                    while let Some(pkt) = p.pull(t) {
                        rlc.push_back((pkt.len, t));
                    }
                }
                now += tti;
                let mut budget = C;
                while budget > 0 {
                    let Some(head) = rlc.front_mut() else { break };
                    let take = budget.min(head.0 as u64) as u32;
                    head.0 -= take;
                    budget -= take as u64;
                    if head.0 == 0 {
                        let (_, at) = rlc.pop_front().unwrap();
                        p.on_sdu_departed(now.saturating_since(at), now);
                    }
                }
                let backlog: u64 = rlc.iter().map(|s| s.0 as u64).sum();
                p.on_report(
                    &crate::LowerLayerReport {
                        tti,
                        backlog_bytes: backlog,
                        backlog_sdus: rlc.len() as u32,
                        pulled_bytes: C - budget,
                        granted_bytes: C,
                        max_bytes: C,
                        ..LowerLayerReport::default()
                    },
                    now,
                );
                p.drain_dropped().for_each(drop);
                if n >= ttis / 2 {
                    worst = worst.max(backlog);
                    wasted += budget;
                }
            }
            let waste = wasted as f64 / (C * (ttis / 2) as u64) as f64;
            assert!(worst <= 16 * C, "{kind}: RLC backlog reached {worst} B");
            assert!(
                waste <= max_waste,
                "{kind}: {:.2}% of capacity unused",
                waste * 100.0
            );
        }
    }

    #[test]
    fn any_pacer_dispatches_and_none_admits_everything() {
        let mut p = AnyPacer::None;
        assert!(p.admits(1500, Instant::ZERO, &LowerState::default()));
        assert_eq!(p.next_wakeup(Instant::ZERO), None);
        let mut p = PacerConfig::Static(StaticConfig {
            limit_bytes: Some(tcran_core::ByteSize(3000)),
            limit_sdus: None,
        })
        .build()
        .unwrap();
        let lower = LowerState {
            bytes: 2000,
            sdus: 2,
        };
        assert!(!p.admits(1500, Instant::ZERO, &lower));
        assert_eq!(p.stats().refused, 1);
        let mut c = AnyPacer::Custom(Box::new(p));
        assert!(c.admits(1000, Instant::ZERO, &lower));
    }
}
