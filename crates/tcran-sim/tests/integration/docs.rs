//! Every TOML block of docs/scenarios.md is valid; the complete scenarios
//! (those with a `duration`) build and run.

use std::path::Path;
use tcran_sim::SimConfig;

#[test]
fn the_scenario_docs_parse_and_run() {
    let doc = include_str!("../../../../docs/scenarios.md");
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(blocks.len() >= 3);
    let mut complete = 0;
    for b in blocks {
        let value: toml::Table = toml::from_str(b).unwrap_or_else(|e| panic!("{e}\n{b}"));
        if !value.contains_key("duration") {
            continue;
        }
        complete += 1;
        let cfg: SimConfig = toml::from_str(b).unwrap_or_else(|e| panic!("{e}\n{b}"));
        let out = tcran_sim::run_scenario("doc", &cfg, Path::new(".")).expect("builds");
        let v = &out.summary.variants;
        assert_eq!(v.len(), 4);
        // The xApp and the deployed CoDel cut the call's delay; USP keeps
        // the SDAP buffer short for it.
        let voip = |r: &tcran_sim::VariantSummary| r.run.flows[1].delay_ms.mean;
        let vanilla = voip(&v[0]);
        assert!(vanilla > 100.0, "vanilla {vanilla}");
        for r in &v[1..] {
            assert!(
                voip(r) * 3.0 < vanilla,
                "{} {} vs {vanilla}",
                r.name,
                voip(r)
            );
        }
        assert!(!out.series[1].reconfigurations.is_empty());
        assert_eq!(out.series[2].reconfigurations[0].t_s, 10.0);
        for r in v {
            let p = r.run.packets;
            assert_eq!(p.created, p.delivered + p.dropped + p.in_flight);
        }
    }
    assert_eq!(complete, 1);
}

/// The scenario files shipped with tcran build.
#[test]
fn the_scenario_files_build() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let cfg: SimConfig =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for (name, c) in cfg.runs() {
                tcran_sim::Sim::new(&c, &dir)
                    .unwrap_or_else(|e| panic!("{} {name}: {e}", path.display()));
            }
            n += 1;
        }
    }
    assert!(n >= 2);
}
