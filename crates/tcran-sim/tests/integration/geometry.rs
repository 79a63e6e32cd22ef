//! A UE driving through a deployment (`channel = { kind = "geometry" }`,
//! `scenarios/drive-away.toml`): the rate falls as it leaves its site, the
//! vanilla RLC buffer then holds seconds of the download ahead of the call,
//! and a paced pipeline keeps the call near its no-load delay; every packet
//! is accounted for.

use std::path::{Path, PathBuf};
use tcran_sim::{RunSummary, Sim, SimConfig};

fn run(variant: &str, seed: u64) -> RunSummary {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/drive-away.toml");
    let text = std::fs::read_to_string(&path).expect("scenario readable");
    let mut cfg = SimConfig::from_toml(&text).expect("scenario parses");
    cfg.seed = seed;
    let (_, c) = cfg
        .runs()
        .into_iter()
        .find(|(n, _)| n == variant)
        .unwrap_or_else(|| panic!("no variant {variant}"));
    Sim::new(&c, Path::new("."))
        .expect("scenario builds")
        .run()
        .summary
}

fn voip_mean_ms(s: &RunSummary) -> f64 {
    s.flows
        .iter()
        .find(|f| f.name == "voip")
        .expect("voip flow")
        .delay_ms
        .mean
}

#[test]
fn driving_to_the_cell_edge_bloats_vanilla_and_not_the_paced_pipeline() {
    for seed in [1, 2] {
        let (vanilla, paced) = (run("vanilla", seed), run("priority+jit", seed));
        for s in [&vanilla, &paced] {
            assert_eq!(s.packets.unaccounted, 0, "seed {seed}: {:?}", s.packets);
        }
        // The core adds 10 ms; a slot and the air a few more.
        let (v, p) = (voip_mean_ms(&vanilla), voip_mean_ms(&paced));
        assert!(
            v > 300.0 && p < 30.0,
            "seed {seed}: vanilla {v} ms, paced {p} ms"
        );
    }
}
