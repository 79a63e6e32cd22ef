//! The `channel_trace` fuzz target's body on stable `cargo test`: the seed
//! corpus (fuzz/seeds/channel_trace, one file per format), random text, and
//! random mutations of the seeds (line deletions, duplications, swaps,
//! number and character substitutions, truncations).
//!
//! The body lives in fuzz/src/channel_trace.rs, shared with the fuzz target
//! so both check the same invariants.

#[path = "../../../../fuzz/src/channel_trace.rs"]
mod channel_trace;
#[path = "../../../../fuzz/src/text_mutations.rs"]
mod text_mutations;

use channel_trace::fuzz_channel_trace;
use proptest::prelude::*;
use std::path::PathBuf;
use tcran_ran::channel::{MahimahiTrace, ThesisTrace, TraceFormat, UccTrace};
use tcran_ran::mobility::drive::DriveTrace;

fn seeds() -> Vec<(String, String)> {
    text_mutations::read_seeds(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/channel_trace"),
    )
}

#[test]
fn seed_corpus_covers_every_format_and_runs() {
    let seeds = seeds();
    let mut formats: Vec<TraceFormat> = seeds
        .iter()
        .filter_map(|(_, text)| TraceFormat::detect(text))
        .collect();
    formats.sort();
    formats.dedup();
    assert_eq!(
        formats,
        [
            TraceFormat::Mahimahi,
            TraceFormat::ThesisPackets,
            TraceFormat::Ucc5g
        ],
        "one seed per reader at least"
    );
    for (name, text) in &seeds {
        fuzz_channel_trace(text.as_bytes());
        // Every seed but the `bad-*` ones is a valid file of its format, so
        // the invariants on parsed traces (additivity, slot sums) run from
        // the seeds on.
        if name.contains("/bad-") {
            continue;
        }
        let parsed = match TraceFormat::detect(text) {
            Some(TraceFormat::Mahimahi) => MahimahiTrace::parse(name, text).map(drop),
            Some(TraceFormat::ThesisPackets) => ThesisTrace::parse(name, text).map(drop),
            Some(TraceFormat::Ucc5g) => UccTrace::parse(name, text).map(drop),
            // A drive is not a capacity trace: no format to detect.
            None if name.contains("drive") => DriveTrace::parse(name, text).map(drop),
            None => panic!("{name}: no format detected"),
        };
        assert!(parsed.is_ok(), "{name}: {parsed:?}");
    }
}

const LINES: &[&str] = &[
    "0",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "1e9",
    "",
    " 7 ",
    "nan",
    "3,4",
    "Timestamp,CQI,DL_bitrate",
    "x,-,99999999999999999999",
    "2019.12.16_10.48.10,-8.5,15,-,20",
    "time_s,serving,cqi,rsrp:1,rsrp:2",
    "0.5,2,9,,-156",
    "1e308,1,15,-31,-31.5",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_text_never_panics(text in "[0-9,\\-\n .a-zA-Z_]{0,400}") {
        fuzz_channel_trace(text.as_bytes());
    }

    #[test]
    fn mutated_seeds_never_break_an_invariant(
        seed in 0usize..64,
        mutations in prop::collection::vec(text_mutations::mutation(LINES, &[], true), 1..6),
    ) {
        let seeds = seeds();
        let (_, text) = &seeds[seed % seeds.len()];
        fuzz_channel_trace(&text_mutations::apply(text, &mutations));
    }
}
