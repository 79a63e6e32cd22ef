//! The `pipeline_config` fuzz target's body on stable `cargo test`: the seed
//! corpus (fuzz/seeds/pipeline_config), random byte strings, and random
//! mutations of valid TOML configs (line deletions, swaps, value and
//! character substitutions).
//!
//! The body lives in fuzz/src/pipeline_config.rs, shared with the fuzz
//! target so both check the same invariants.

#[path = "../../../../fuzz/src/pipeline_config.rs"]
#[allow(dead_code)]
mod pipeline_config;
#[path = "../../../../fuzz/src/text_mutations.rs"]
mod text_mutations;

use pipeline_config::{exercise, fuzz_pipeline_config};
use proptest::prelude::*;
use std::path::PathBuf;
use tcran_tc::PipelineConfig;

fn seed_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/pipeline_config")
}

fn seeds() -> Vec<(String, String)> {
    text_mutations::read_seeds(&seed_dir())
}

#[test]
fn seed_corpus_runs_and_some_seeds_build() {
    let seeds = seeds();
    assert!(seeds.len() >= 5, "seed corpus too small");
    let mut built = 0;
    for (name, text) in &seeds {
        fuzz_pipeline_config(text.as_bytes());
        let parsed = if name.ends_with(".json") {
            serde_json::from_str::<PipelineConfig>(text).map_err(|e| e.to_string())
        } else {
            toml::from_str::<PipelineConfig>(text).map_err(|e| e.to_string())
        };
        match parsed.map(|c| c.build().map(|_| ()).map_err(|e| e.to_string())) {
            Ok(Ok(())) => built += 1,
            other => eprintln!("seed {name} does not build (still a useful fuzz seed): {other:?}"),
        }
    }
    // Seeds that build reach the data path; the fuzzer mutates from there.
    // (Seeds naming stages a given tcran-tc does not have yet still help the
    // fuzzer with syntax, so only a floor is asserted.)
    assert!(built >= 2, "only {built} of {} seeds build", seeds.len());
}

/// Mutations of one valid config's text.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "65535",
    "8191",
    "4294967295",
    "18446744073709551615",
    "1e308",
    "nan",
    "-inf",
    "0.0",
    "\"\"",
    "\"0B\"",
    "\"1B\"",
    "\"0ms\"",
    "\"1ns\"",
    "\"1000000h\"",
    "\"0bit/s\"",
    "\"1bit/s\"",
    "\"100Tbit/s\"",
    "\"18446744073709551615B\"",
    "\"5-3\"",
    "\"0-65535\"",
    "\"::/0\"",
    "\"10.0.0.0/33\"",
    "\"ce\"",
    "[]",
    "{}",
    "true",
    "{ kind = \"none\" }",
    "{ kind = \"flow_hash\", buckets = 0 }",
    "{ kind = \"flow_hash\", buckets = 4294967295 }",
    "{ kind = \"drr\", quantum = \"1B\" }",
    "{ kind = \"static\" }",
    "{ kind = \"bdp\", offset = -1.0 }",
];

fn toml_seeds() -> Vec<String> {
    seeds()
        .into_iter()
        .filter(|(name, _)| name.ends_with(".toml"))
        .map(|(_, t)| t)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_configs_never_panic(
        seed in any::<prop::sample::Index>(),
        muts in prop::collection::vec(text_mutations::mutation(&[], VALUES, true), 1..4),
    ) {
        let seeds = toml_seeds();
        fuzz_pipeline_config(&text_mutations::apply(&seeds[seed.index(seeds.len())], &muts));
    }

    #[test]
    fn random_text_never_panics(text in "[a-z_=\\[\\]{}\", .0-9\n]{0,200}") {
        fuzz_pipeline_config(text.as_bytes());
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        fuzz_pipeline_config(&bytes);
    }
}

#[test]
fn default_values_config_is_exercised() {
    let c: PipelineConfig = toml::from_str("[[queues]]\nid = 0\nkind = \"fifo\"").unwrap();
    exercise(&c);
}
