//! Per-packet cost of push + pull (docs/performance.md).
//!
//! (a) one FIFO + round robin + 5G-BDP;
//! (b) 1024 hashed CoDel queues + DRR++ + e5G-BDP with 10,000 active flows.
//! Each element is one push and one pull of a 1500-byte packet; 16 arrive
//! per 1 ms TTI (192 Mbit/s) on a link that carries 17 per TTI, and the
//! per-TTI RLC report is included in the cost.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use tcran_core::Duration;
use tcran_tc::workload::{config, flow_templates, Driver, FIFO_RR_BDP, FQ_CODEL_E5G};

const PER_TTI: usize = 16;

fn run(c: &mut Criterion, name: &str, cfg: &str, flows: usize) {
    let templates = flow_templates(flows, 1500);
    let mut g = c.benchmark_group("push_pull");
    g.throughput(Throughput::Elements(PER_TTI as u64));
    g.bench_function(name, |b| {
        let mut p = config(cfg).build().unwrap();
        let mut d = Driver::new(
            Duration::from_millis(1),
            (PER_TTI as u64 + 1) * 1500,
            PER_TTI as u32,
        );
        // Warm up: every queue and buffer reaches its working size.
        for _ in 0..20_000 {
            for _ in 0..PER_TTI {
                d.push_pull(&mut p, &templates);
            }
            d.end_tti(&mut p);
        }
        b.iter_batched_ref(
            || (),
            |_| {
                for _ in 0..PER_TTI {
                    d.push_pull(&mut p, &templates);
                }
                d.end_tti(&mut p);
            },
            BatchSize::SmallInput,
        );
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    run(c, "a_fifo_rr_bdp", FIFO_RR_BDP, 1);
    run(
        c,
        "b_fq_codel_1024_drr_e5g_bdp_10k_flows",
        FQ_CODEL_E5G,
        10_000,
    );
}

criterion_group!(pipeline, benches);
criterion_main!(pipeline);
