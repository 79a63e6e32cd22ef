//! The `scenario_config` fuzz target's body on stable `cargo test`: every
//! shipped scenario (scenarios/, scenarios/reproduction/) and the fuzz
//! seeds, then random line mutations of them (deleted, duplicated and
//! swapped lines, values replaced by edge cases: zero and huge durations,
//! rates, limits, probabilities, unknown kinds).
//!
//! The body lives in fuzz/src/scenario_config.rs, shared with the fuzz
//! target so both check the same invariants; each run is cut to
//! `MAX_RUN` of simulated time.

#[path = "../../../../fuzz/src/scenario_config.rs"]
mod scenario_config;
#[path = "../../../../fuzz/src/text_mutations.rs"]
mod text_mutations;

use proptest::prelude::*;
use scenario_config::fuzz_scenario_config;
use std::path::PathBuf;

fn seeds() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out: Vec<(String, String)> = [
        "scenarios",
        "scenarios/reproduction",
        "fuzz/seeds/scenario_config",
    ]
    .iter()
    .flat_map(|dir| text_mutations::read_seeds(&root.join(dir)))
    .filter(|(name, _)| name.ends_with(".toml"))
    .collect();
    out.sort();
    out
}

#[test]
fn every_shipped_scenario_runs_and_accounts_for_its_packets() {
    let seeds = seeds();
    assert!(seeds.len() > 20, "found {} scenarios", seeds.len());
    for (name, text) in &seeds {
        // Every shipped scenario builds, so every one of its runs happens
        // (none is refused or skipped by the body), except those that read
        // a trace file: the fuzz body reads no files, by design.
        let cfg: tcran_sim::SimConfig =
            toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let reads_files = cfg.ues.iter().any(|ue| {
            matches!(&ue.channel, tcran_sim::scenario::ChannelConfig::Trace { path, .. }
                if !path.starts_with("builtin:"))
        });
        let runs = if reads_files {
            0
        } else {
            cfg.variants.len().clamp(1, scenario_config::MAX_VARIANTS)
        };
        assert_eq!(fuzz_scenario_config(text.as_bytes()), runs, "{name}");
    }
}

/// Lines a mutation may put in place of another: values at and beyond the
/// edges of what each field allows, and shapes the parser must refuse.
const LINES: &[&str] = &[
    "duration = \"0s\"",
    "duration = \"1ns\"",
    "duration = \"100000h\"",
    "warmup = \"10s\"",
    "seed = 18446744073709551615",
    "bler = 1.0",
    "bler = 0.999",
    "bler = -0.1",
    "mcs = 0",
    "mcs = 28",
    "mcs = 29",
    "bandwidth_mhz = 100",
    "bandwidth_mhz = 7",
    "numerology = 3",
    "scheduling_period = \"10ms\"",
    "scheduling_period = \"1ns\"",
    "tdd = \"DDDSU\"",
    "tdd = \"UUUUU\"",
    "buffer_limit = \"0B\"",
    "buffer_limit = \"1B\"",
    "limit_packets = 0",
    "limit_packets = 1",
    "rate = \"0bit/s\"",
    "rate = \"1bit/s\"",
    "interval = \"0s\"",
    "start = \"100s\"",
    "stop = \"0s\"",
    "ue = 9",
    "drb = 0",
    "qfi = 64",
    "series_bin = \"1ns\"",
    "core_delay = \"0s\"",
    "ul_delay = \"10s\"",
    "kind = \"codel\"",
    "kind = \"nonsense\"",
    "[[flows]]",
    "[[ues]]",
    "[[variants]]",
    "x = [",
    "",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn mutated_scenarios_never_break_an_invariant(
        seed in 0usize..1024,
        mutations in prop::collection::vec(text_mutations::mutation(LINES, &[], false), 1..4),
    ) {
        let seeds = seeds();
        let (_, text) = &seeds[seed % seeds.len()];
        let _runs = fuzz_scenario_config(&text_mutations::apply(text, &mutations));
    }
}
