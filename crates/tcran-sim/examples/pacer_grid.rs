//! The pacer grid of docs/reproduction.md sec. 8: every variant of every
//! `scenarios/reproduction/pacer-*.toml` (the unpaced buffer, jit and the
//! four paper pacers) with the MAC scheduling every slot and every 10 ms,
//! over seeds. Prints one Markdown row per (channel, period, pacer): bulk
//! throughput and PRB use, each also as a share of the unpaced variant's,
//! and the game's one-way delay (p95, mean); `--csv FILE` writes the same
//! rows for plotting.
//!
//! ```sh
//! cargo run --release -p tcran-sim --example pacer_grid -- [--seeds 3] [--secs 60] [--csv grid.csv] [--only tmobile] [EXTRA.toml ...]
//! ```
//!
//! Extra scenario files (e.g. a UCC CSV channel) are run the same way; they
//! need the same variant names.

use std::path::{Path, PathBuf};
use tcran_core::Duration;
use tcran_sim::{RunSummary, Sim, SimConfig};

const CHANNELS: &[&str] = &[
    "thesis-pedestrian",
    "thesis-train",
    "verizon",
    "tmobile",
    "fixed-mcs",
    "tdd",
    "ucc-driving",
    "ucc-driving2",
    "ucc-static",
    "ucc-static2",
];

#[derive(Default, Clone, Copy)]
struct Mean {
    bulk: f64,
    prb: f64,
    p95: f64,
    mean: f64,
    rlc: f64,
}

fn metrics(s: &RunSummary) -> Mean {
    let flow = |n: &str| s.flows.iter().find(|f| f.name == n);
    let game = flow("gaming").expect("gaming flow");
    Mean {
        bulk: flow("bulk").map_or(0.0, |f| f.throughput_mbps),
        prb: s.prb_utilization,
        p95: game.delay_ms.p95,
        mean: game.delay_ms.mean,
        rlc: s.rlc.mean_bytes,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut seeds, mut secs, mut csv, mut only) = (3u64, 60u64, None::<PathBuf>, None::<String>);
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/reproduction");
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seeds" => seeds = args.next().and_then(|v| v.parse().ok()).expect("--seeds N"),
            "--secs" => secs = args.next().and_then(|v| v.parse().ok()).expect("--secs N"),
            "--csv" => csv = args.next().map(PathBuf::from),
            "--only" => only = args.next(),
            f => files.push((f.to_string(), PathBuf::from(f))),
        }
    }
    let mut all: Vec<(String, PathBuf)> = CHANNELS
        .iter()
        .map(|c| (c.to_string(), dir.join(format!("pacer-{c}.toml"))))
        .collect();
    all.extend(files);
    let mut rows = Vec::new();
    println!("| channel | MAC period | pacer | bulk Mbit/s | of unpaced | PRB use | of unpaced | game p95 ms | game mean ms | RLC mean B |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, path) in &all {
        if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("scenario readable");
        for period in [None, Some(Duration::from_millis(10))] {
            let mut per_variant: Vec<(String, Mean)> = Vec::new();
            for seed in 1..=seeds {
                let mut cfg = SimConfig::from_toml(&text).expect("scenario parses");
                cfg.duration = Duration::from_secs(secs);
                cfg.seed = seed;
                cfg.cell.scheduling_period = period;
                for (variant, c) in cfg.runs() {
                    let m = metrics(
                        &Sim::new(&c, path.parent().unwrap_or(Path::new(".")))
                            .expect("scenario builds")
                            .run()
                            .summary,
                    );
                    let k = seeds as f64;
                    match per_variant.iter_mut().find(|(n, _)| *n == variant) {
                        Some((_, acc)) => {
                            acc.bulk += m.bulk / k;
                            acc.prb += m.prb / k;
                            acc.p95 += m.p95 / k;
                            acc.mean += m.mean / k;
                            acc.rlc += m.rlc / k;
                        }
                        None => per_variant.push((
                            variant,
                            Mean {
                                bulk: m.bulk / k,
                                prb: m.prb / k,
                                p95: m.p95 / k,
                                mean: m.mean / k,
                                rlc: m.rlc / k,
                            },
                        )),
                    }
                }
            }
            let base = per_variant
                .iter()
                .find(|(n, _)| n == "unpaced")
                .map(|(_, m)| *m)
                .unwrap_or_default();
            let period_name = period.map_or("slot".to_string(), |p| p.to_string());
            for (variant, m) in &per_variant {
                let share = |a: f64, b: f64| if b > 0.0 { a / b * 100.0 } else { f64::NAN };
                println!(
                    "| {name} | {period_name} | {variant} | {:.2} | {:.1} % | {:.2} % | {:.1} % | {:.2} | {:.2} | {:.0} |",
                    m.bulk,
                    share(m.bulk, base.bulk),
                    m.prb * 100.0,
                    share(m.prb, base.prb),
                    m.p95,
                    m.mean,
                    m.rlc
                );
                rows.push(format!(
                    "{name},{period_name},{variant},{:.4},{:.4},{:.4},{:.4},{:.3},{:.3},{:.0}",
                    m.bulk,
                    share(m.bulk, base.bulk),
                    m.prb * 100.0,
                    share(m.prb, base.prb),
                    m.p95,
                    m.mean,
                    m.rlc
                ));
            }
        }
    }
    if let Some(p) = csv {
        let mut text = "channel,period,pacer,bulk_mbps,bulk_share_pct,prb_pct,prb_share_pct,game_p95_ms,game_mean_ms,rlc_mean_bytes\n".to_string();
        for r in rows {
            text.push_str(&r);
            text.push('\n');
        }
        std::fs::write(&p, text).expect("csv written");
    }
}
